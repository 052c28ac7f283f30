"""The web dashboard's plumbing: session cookies and CSRF tokens (`session`), HTML pages,
errors and the signed-in dependency (`render`). Its pages are routers in `api/routes/`
(`dashboard`, `dashboard_webhooks`)."""
