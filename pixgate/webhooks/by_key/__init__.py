"""The Central Bank's webhooks by key (`/webhook/{chave}`, `/webhook` under the API Pix's base
path): their wire shapes and routes. Their use cases are `webhooks.service.by_key`, their rows
`webhooks.queries.by_key`, their deliveries the outbox's."""
