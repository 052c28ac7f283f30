"""A typed Python client of the gateway's API, for integrators.

    from pixgate.client import Client, errors

    with Client(url, client_id, client_secret, cert=("client.pem", "client.key")) as client:
        print(client.balances())

`Client` (blocking) and `AsyncClient` (asyncio) obtain and renew their token themselves,
retry only what cannot be done twice, raise one `errors.PixgateError` subclass per error
code, and answer the server's own models. `webhooks.verify` checks a received webhook.
Importing this package starts nothing: no database, no settings. See docs/client.md.
"""

from pixgate.client import errors, webhooks
from pixgate.client.async_client import AsyncClient
from pixgate.client.retry import RetryPolicy
from pixgate.client.sync_client import Client

__all__ = ["AsyncClient", "Client", "RetryPolicy", "errors", "webhooks"]
