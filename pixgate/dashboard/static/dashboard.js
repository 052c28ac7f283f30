// pixgate dashboard: progressive enhancement only. Every page works without this file;
// with it, "Copy" buttons appear next to codes and secrets.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const button of document.querySelectorAll("button.copy[data-copy]")) {
    const field = document.getElementById(button.dataset.copy);
    const status = button.nextElementSibling;
    if (!field) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      let done = false;
      try {
        await navigator.clipboard.writeText(field.value);
        done = true;
      } catch (_) {
        field.select();
        done = document.execCommand && document.execCommand("copy");
      }
      if (status) status.textContent = done ? "Copied." : "Select the text and copy it.";
    });
  }
});
