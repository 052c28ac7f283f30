"""The client's methods, declared once for both clients (`binding`): each is the operation
module's function of the same name."""

from __future__ import annotations

from pixgate.client import hooks, operations, sandbox
from pixgate.client.binding import listing, operation


class Operations:
    balances = operation(operations.balances)
    balance = operation(operations.balance)
    cash_out = operation(operations.cash_out)
    qr_cash_out = operation(operations.qr_cash_out)
    dict_transfer = operation(operations.dict_transfer)
    cash_in = operation(operations.cash_in)
    create_cob = operation(operations.create_cob)
    cob = operation(operations.cob)
    revise_cob = operation(operations.revise_cob)
    refund = operation(operations.refund)
    devolucao = operation(operations.devolucao)
    get_devolucao = operation(operations.get_devolucao)
    transactions = listing(operations.transactions)
    transactions_by_pix_key = listing(operations.transactions_by_pix_key)
    med = listing(operations.med)
    events = listing(operations.events)


class WebhookOperations:
    list = operation(hooks.list_webhooks)
    register = operation(hooks.register)
    resend = operation(hooks.resend)


class SandboxOperations:
    pay = operation(sandbox.pay)
    incoming = operation(sandbox.incoming)
    refund_out = operation(sandbox.refund_out)
    open_med = operation(sandbox.open_med)
    analyse_med = operation(sandbox.analyse_med)
