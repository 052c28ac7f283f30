// pixgate dashboard: progressive enhancement only. Every page works without this file;
// with it, "Copy" buttons appear next to codes and secrets, and a charge's page keeps its
// status fresh (it asks the gateway every few seconds until the charge is paid or gone).
"use strict";
const POLL_MS = 3000;

function enableCopyButtons() {
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
}

function pollStatus(holder) {
  const ask = async () => {
    let shown;
    try {
      const answer = await fetch(holder.dataset.poll, { credentials: "same-origin" });
      if (!answer.ok) return setTimeout(ask, POLL_MS * 4);
      shown = await answer.json();
    } catch (_) {
      return setTimeout(ask, POLL_MS * 4);
    }
    const badge = holder.querySelector(".badge");
    if (badge && badge.dataset.status !== shown.status) {
      badge.dataset.status = shown.status;
      badge.className = "badge " + shown.badge;
      badge.textContent = shown.label;
    }
    if (shown.final) {
      // the rest of the page (paid time, the simulate button) follows its new status
      window.location.reload();
      return;
    }
    setTimeout(ask, POLL_MS);
  };
  setTimeout(ask, POLL_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  enableCopyButtons();
  for (const holder of document.querySelectorAll("[data-poll]")) pollStatus(holder);
});
