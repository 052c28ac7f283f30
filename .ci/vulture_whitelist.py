"""What vulture cannot see being used, for `.ci/run`'s dead-code check (`vulture`, configured
in pyproject.toml's [tool.vulture]). Routes, Typer commands, pydantic validators, pytest
fixtures, Hypothesis rules and Alembic's revision variables are left out there by decorator
or name; what remains is read by a library or by value, each named here with the reason.
Anything else vulture reports is dead: remove it rather than adding it here."""

from pixgate.accounts.rules.scopes import Scope
from pixgate.core.labels import SplitFrequency
from pixgate.jobs.queue import JobStatus
from pixgate.med.rules import MedCause
from pixgate.payouts.rules import AcceptMode
from pixgate.webhooks.by_key import routes as webhooks_by_key
from pixgate.webhooks.service import transport
from tests.deploy.test_pypix_api import PixgatePixAPI

# Enum members that the database stores and the code reads by value (`JobStatus(row[...])`,
# a CHECK constraint, an HTTP field), never by name.
_ = JobStatus.QUEUED, JobStatus.RUNNING
_ = SplitFrequency.IMMEDIATE
# Scopes a token may be granted (`frozenset(Scope)`, by value from a token request) whose
# operations are not served yet: cobv, lotecobv, cobr, rec, solicrec and their webhooks.
_ = (
    Scope.COBR_WRITE,
    Scope.COBR_READ,
    Scope.REC_WRITE,
    Scope.REC_READ,
    Scope.SOLICREC_WRITE,
    Scope.SOLICREC_READ,
    Scope.COBV_WRITE,
    Scope.COBV_READ,
    Scope.LOTECOBV_WRITE,
    Scope.LOTECOBV_READ,
    Scope.WEBHOOKREC_READ,
    Scope.WEBHOOKREC_WRITE,
    Scope.WEBHOOKCOBR_READ,
    Scope.WEBHOOKCOBR_WRITE,
    Scope.PAYLOADLOCATIONREC_WRITE,
    Scope.PAYLOADLOCATIONREC_READ,
)
# A mode only the SQL functions pass to payout_accept() (refund_create()); the enum names
# every mode the function takes, which a test compares with its CHECK.
_ = AcceptMode.REFUND
_ = (
    MedCause.UNAUTHORIZED_TRANSACTION,
    MedCause.SOCIAL_ENGINEERING,
    MedCause.SCAM,
    MedCause.ACCOUNT_TAKEOVER,
    MedCause.COERCION,
    MedCause.FRAUDULENT_ACCESS,
    MedCause.OTHER_FRAUD,
)

# httpx and httpcore call these overrides of their own interfaces.
_ = transport._NoCookies.extract_cookies, transport._NoCookies.set_cookie_header
_ = transport._GuardedBackend.connect_unix_socket
_ = transport.httpx.AsyncClient._cookies

# The callback of PUT /webhook/{chave}: a route FastAPI only documents (its `callbacks=`),
# the integrator's to serve.
_ = webhooks_by_key.pix_received

# Attributes set for a library to read: FastAPI reads a webhook receiver's signature from
# `__annotations__`; schemathesis reads `node._nodeid`; `decimal` reads a context's `prec`.
_ = object.__annotations__, object._nodeid, object.prec

# pypix-api's bank interface, which the client test implements: the library reads these; and
# its requests session's `trust_env`, which requests reads.
_ = PixgatePixAPI.TOKEN_URL, PixgatePixAPI.get_bank_code, PixgatePixAPI.get_base_url
_ = object.trust_env
