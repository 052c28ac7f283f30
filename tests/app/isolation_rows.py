"""The isolation sweep's table: every route, classified (tests/app/test_isolation.py)."""

from __future__ import annotations

from fastapi.routing import APIRoute

from pixgate.routers import API_PIX_ROUTERS, ROUTERS
from tests.app.isolation_api_pix import API_PIX_ROWS
from tests.app.isolation_calls import (
    BETA_QR,
    BY_KEY,
    COB,
    DEVOLUCAO,
    PAY,
    PAYER,
    REFUND_IN,
    REFUND_OUT,
    RESEND,
    Call,
    Row,
    cash_in,
    cash_out,
    dict_key,
    e2e,
    empty_page,
    ext,
    html,
    no_leak_only,
    own_balance,
    own_cob,
    own_dashboard_charge,
    own_dashboard_webhook,
    own_med_case,
    own_overview,
    own_transaction,
    own_webhook,
    own_webhook_list,
    qr,
    resend,
    session,
    signed_out,
    statement,
    status,
    token,
    uid,
)
from tests.app.isolation_world import A_KEY, A_QR_KEY, API_PIX, CPF

ROWS: list[Row] = [
    # token: A's clientId with B's certificate. Without A's secret the answer is an unknown
    # clientId's (401), so B cannot tell that A's clientId exists; with A's secret, 403
    # PUB_CERT_NOT_AUTHORIZED_FOR_ACCOUNT
    Row(
        "token-a-client", "POST", "/api/auth/token", token(lambda w: w.b.client_secret), status(401)
    ),
    Row(
        "oauth-token-a-client",
        "POST",
        "/oauth/token",
        token(lambda w: w.b.client_secret),
        status(401),
    ),
    Row(
        "token-a-client-a-secret",
        "POST",
        "/api/auth/token",
        token(lambda w: w.a.client_secret),
        status(403),
    ),
    # externalIds are unique per account: A's externalId is free for B, and never a duplicate
    # error naming A's transaction (existingTransactionId)
    Row(
        "cash-in-a-external-id", "POST", "/api/pix/cash-in", cash_in(ext("paid")), own_transaction()
    ),
    Row(
        "cash-in-a-cash-out-external-id",
        "POST",
        "/api/pix/cash-in",
        cash_in(ext("cash_out")),
        own_transaction(),
    ),
    Row(
        "cash-out-a-external-id",
        "POST",
        "/api/pix/cash-out",
        cash_out(ext("cash_out")),
        own_transaction(),
    ),
    Row(
        "cash-out-a-charge-external-id",
        "POST",
        "/api/pix/cash-out",
        cash_out(ext("open")),
        own_transaction(),
    ),
    # the DICT is one directory (as the real one): B may pay A's registered key, A unchanged
    Row(
        "cash-out-to-a-dict-key",
        "POST",
        "/api/pix/cash-out",
        cash_out(lambda w: "beta-to-alfa-key", key=A_KEY),
        own_transaction(),
    ),
    Row(
        "qr-a-external-id",
        "POST",
        "/api/pix/cash-out-qrcode",
        qr(lambda w: BETA_QR, "1.03", ext("qr")),
        own_transaction(),
    ),
    Row(
        "qr-a-paid-charge",
        "POST",
        "/api/pix/cash-out-qrcode",
        qr(lambda w: w.charge["paid"]["pix_code"], "21.43", lambda w: "beta-qr-paid"),
        status(400),
    ),
    Row(
        "qr-a-cob-wrong-amount",
        "POST",
        "/api/pix/cash-out-qrcode",
        qr(lambda w: w.charge["cob"]["pix_code"], "1.00", lambda w: "beta-qr-cob"),
        status(400),
    ),
    # DICT transfers: idempotency keys are the account's; A's key replays nothing for B
    Row(
        "dict-a-idempotency-key-same-body",
        "POST",
        "/dict/pix",
        lambda w: Call(json=w.dict_body, headers={"x-idempotency-key": w.idempotency_key}),
        own_transaction(field_name="id"),
    ),
    Row(
        "dict-a-idempotency-key-other-body",
        "POST",
        "/dict/pix",
        lambda w: Call(
            json={"pixKey": A_KEY, "payment": {"currency": "BRL", "amount": 1.04}},
            headers={"x-idempotency-key": w.idempotency_key},
        ),
        own_transaction(field_name="id"),
    ),
    # cob: txids are unique per receiving account
    Row("cob-get-a-txid", "GET", COB, lambda w: Call(params={"txid": w.cob_txid}), status(404)),
    Row(
        "cob-get-a-cash-in-txid",
        "GET",
        COB,
        lambda w: Call(params={"txid": w.charge["open"]["txid"]}),
        status(404),
    ),
    Row(
        "cob-patch-a-txid",
        "PATCH",
        COB,
        lambda w: Call(
            params={"txid": w.cob_txid},
            json={"valor": {"original": "1.05"}, "solicitacaoPagador": "Beta mudou"},
        ),
        status(404),
    ),
    Row(
        "cob-cancel-a-txid",
        "PATCH",
        COB,
        lambda w: Call(
            params={"txid": w.cob_txid}, json={"status": "REMOVIDA_PELO_USUARIO_RECEBEDOR"}
        ),
        status(404),
    ),
    Row(
        "cob-put-a-txid",
        "PUT",
        COB,
        lambda w: Call(
            params={"txid": w.cob_txid},
            json={"calendario": {"expiracao": 600}, "valor": {"original": "1.06"}},
        ),
        own_cob,
    ),
    # balances and lists: B's own, filters on A's values find nothing
    Row("balances", "GET", "/accounts/balances", lambda w: Call(), own_balance),
    Row("balance", "GET", "/api/balance", lambda w: Call(), own_balance),
    Row("statement", "GET", "/api/transactions", lambda w: Call(), empty_page),
    *(
        Row(
            f"statement-external-id-{role}",
            "GET",
            "/api/transactions",
            statement(externalId=ext(role)),
            empty_page,
        )
        for role in ("cash_out", "paid", "open", "qr")
    ),
    *(
        Row(
            f"statement-end-to-end-{role}",
            "GET",
            "/api/transactions",
            statement(endToEndId=e2e(role)),
            empty_page,
        )
        for role in ("cash_out", "paid", "qr", "dict", "incoming")
    ),
    Row(
        "statement-all-filters",
        "GET",
        "/api/transactions",
        statement(
            externalId=ext("cash_out"),
            endToEndId=e2e("cash_out"),
            status=lambda w: "CONFIRMED",
            type=lambda w: "WITHDRAW",
        ),
        empty_page,
    ),
    Row(
        "by-key-a-cash-out-key", "GET", BY_KEY, lambda w: Call(params={"pixKey": A_KEY}), empty_page
    ),
    Row(
        "by-key-a-key-other-spelling",
        "GET",
        BY_KEY,
        lambda w: Call(params={"pixKey": A_KEY.upper()}),
        empty_page,
    ),
    Row("by-key-a-qr-key", "GET", BY_KEY, lambda w: Call(params={"pixKey": A_QR_KEY}), empty_page),
    # webhooks: configuration, events and resend are the account's
    Row(
        "webhooks-add-a-url",
        "POST",
        "/api/webhooks",
        lambda w: Call(
            json={
                "url": w.receiver.url("/alfa-out"),
                "eventType": "cash_out",
                "headers": [{"key": "X-Alfa-Token", "value": "beta"}],
                "version": "v2",
            }
        ),
        own_webhook,
    ),
    Row("webhooks-list", "GET", "/api/webhooks", lambda w: Call(), own_webhook_list),
    Row("events", "GET", "/api/events", lambda w: Call(), empty_page),
    Row(
        "events-cash-out",
        "GET",
        "/api/events",
        lambda w: Call(query={"type": "cash_out", "deliveryState": "delivered"}),
        empty_page,
    ),
    Row(
        "resend-a-numeric-id", "POST", RESEND, resend(lambda w: w.tx["cash_out"]["id"]), status(404)
    ),
    Row("resend-a-uuid", "POST", RESEND, resend(uid("cash_out")), status(404)),
    Row("resend-a-uuid-to-b-url", "POST", RESEND, resend(uid("paid"), url=True), status(404)),
    Row("resend-a-external-id", "POST", RESEND, resend(ext("cash_out")), status(404)),
    Row("resend-a-end-to-end-id", "POST", RESEND, resend(e2e("dict")), status(404)),
    Row(
        "resend-a-incoming-end-to-end-id",
        "POST",
        RESEND,
        resend(e2e("incoming"), url=True),
        status(404),
    ),
    Row(
        "resend-a-event-id",
        "POST",
        RESEND,
        resend(lambda w: f"evt_{w.events['cash_out']}"),
        status(404),
    ),
    Row(
        "resend-a-event-id-to-b-url",
        "POST",
        RESEND,
        resend(lambda w: f"evt_{w.events['cash_in']}", url=True),
        status(404),
    ),
    # refunds: only the account's own receipts (and its own refunds, and cash-outs) are named
    *(
        Row(
            f"refund-in-a-{role}",
            "POST",
            REFUND_IN,
            lambda w, role=role: Call(
                params={"id": uid(role)(w)},
                json={"refundValue": "0.01", "externalId": "betarefund"},
            ),
            status(404),
        )
        for role in ("incoming", "paid", "cash_out", "refund")
    ),
    *(
        Row(
            f"devolucao-put-a-{role}",
            "PUT",
            DEVOLUCAO,
            lambda w, role=role: Call(
                params={"e2eid": e2e(role)(w), "id": w.tx["refund"]["external_id"]},
                json={"valor": "1.11", "descricao": "Devolucao Alfa"},
            ),
            status(404),
        )
        for role in ("incoming", "paid")
    ),
    Row(
        "devolucao-get-a-refund",
        "GET",
        DEVOLUCAO,
        lambda w: Call(params={"e2eid": e2e("incoming")(w), "id": w.tx["refund"]["external_id"]}),
        status(404),
    ),
    *(
        Row(
            f"refund-out-a-{role}",
            "POST",
            REFUND_OUT,
            lambda w, role=role: Call(params={"transactionId": uid(role)(w)}, json={"value": 1}),
            status(404),
        )
        for role in ("cash_out", "qr", "dict")
    ),
    # MED: B lists only its own cases; A's PIX is no PIX of B's (an unreconciled case of B's,
    # nothing blocked); A's case can be neither analysed nor cancelled by B
    Row("med-list", "GET", "/api/med", lambda w: Call(), empty_page),
    *(
        Row(
            f"med-list-{name}",
            "GET",
            "/api/med",
            lambda w, query=query: Call(query=query),
            empty_page,
        )
        for name, query in (
            ("received", {"status": "RECEIVED"}),
            ("reconciled", {"isReconciled": True}),
        )
    ),
    Row(
        "sandbox-med-a-end-to-end-id",
        "POST",
        "/sandbox/med",
        lambda w: Call(json={"endToEndId": e2e("incoming")(w)}),
        own_med_case,
    ),
    Row(
        "sandbox-med-cancel-a-case",
        "POST",
        "/sandbox/med",
        lambda w: Call(json={"endToEndId": e2e("incoming")(w), "reason": "REFUND_CANCELLATION"}),
        status(404),
    ),
    *(
        Row(
            f"sandbox-med-analysis-a-case-{result.lower()}",
            "POST",
            "/sandbox/med/{id}/analysis",
            lambda w, result=result: Call(params={"id": str(w.med["id"])}, json={"result": result}),
            status(404),
        )
        for result in ("APPROVED", "REJECTED")
    ),
    # sandbox: A's DICT entry is A's (409: held by another account), A's paid charge stays paid
    Row("sandbox-dict-a-key", "POST", "/sandbox/dict/keys", dict_key(A_KEY), status(409)),
    Row(
        "sandbox-dict-a-key-other-spelling",
        "POST",
        "/sandbox/dict/keys",
        dict_key(A_KEY.upper()),
        status(409),
    ),
    Row(
        "sandbox-pay-a-paid-charge",
        "POST",
        PAY,
        lambda w: Call(json={"pixCode": w.charge["paid"]["pix_code"], "payer": PAYER}),
        status(409),
    ),
    Row(
        "sandbox-incoming",
        "POST",
        "/sandbox/pix/incoming",
        lambda w: Call(json={"value": "1.07", "payer": PAYER}),
        own_transaction(),
    ),
    # unauthenticated, aggregated by route template: no identifier of anyone
    # the dashboard: a session of B is B's; A's clientId signs nothing in with B's secret
    Row(
        "dashboard-login-a-client-b-secret",
        "POST",
        "/dashboard/login",
        lambda w: Call(
            who="login", form={"clientId": w.a.client_id, "clientSecret": w.b.client_secret}
        ),
        signed_out,
    ),
    Row("dashboard-overview", "GET", "/dashboard", session(), own_overview),
    Row(
        "dashboard-transactions-a-external-id",
        "GET",
        "/dashboard/transactions",
        lambda w: Call(who="session", query={"externalId": w.tx["cash_out"]["external_id"]}),
        html(200, "No transactions."),
    ),
    Row(
        "dashboard-transactions-a-end-to-end-id",
        "GET",
        "/dashboard/transactions",
        lambda w: Call(who="session", query={"endToEndId": w.tx["dict"]["end_to_end_id"]}),
        html(200, "No transactions."),
    ),
    Row("dashboard-charges", "GET", "/dashboard/charges", session(), html(200)),
    Row(
        "dashboard-charge-a-external-id",
        "POST",
        "/dashboard/charges",
        lambda w: Call(
            who="session",
            form={
                "value": "1.09",
                "description": "Cobranca Beta",
                "externalId": w.tx["open"]["external_id"],
                "payerName": "Pagador Beta",
                "payerDocument": CPF,
            },
        ),
        own_dashboard_charge,
    ),
    *(
        Row(
            f"dashboard-charge-{role}-a-{name}",
            "GET",
            path,
            session(transaction_id=uid(name)),
            html(404),
        )
        for role, path in (
            ("page", "/dashboard/charges/{transaction_id}"),
            ("qr", "/dashboard/charges/{transaction_id}/qr.png"),
            ("status", "/dashboard/charges/{transaction_id}/status"),
        )
        for name in ("open", "paid", "cob")
    ),
    *(
        Row(
            f"dashboard-charge-simulate-payment-a-{name}",
            "POST",
            "/dashboard/charges/{transaction_id}/simulate-payment",
            session(transaction_id=uid(name)),
            html(404),
        )
        for name in ("open", "paid", "cob")
    ),
    Row("dashboard-charge-form", "GET", "/dashboard/charges/new", session(), html(200)),
    *(
        Row(
            f"dashboard-transaction-a-{name}",
            "GET",
            "/dashboard/transactions/{transaction_uuid}",
            session(transaction_uuid=uid(name)),
            html(404),
        )
        for name in ("cash_out", "paid", "open", "cob", "qr", "dict", "incoming", "refund")
    ),
    Row("dashboard-webhooks", "GET", "/dashboard/webhooks", session(), html(200)),
    Row(
        "dashboard-webhooks-edit-a-id",
        "GET",
        "/dashboard/webhooks",
        lambda w: Call(who="session", query={"edit": str(w.endpoints[0])}),
        html(200),
    ),
    Row(
        "dashboard-webhooks-add-a-url",
        "POST",
        "/dashboard/webhooks",
        lambda w: Call(
            who="session",
            form={"eventType": "cash_out", "url": w.receiver.url("/alfa-out"), "version": "v2"},
        ),
        own_dashboard_webhook,
    ),
    *(
        Row(
            f"dashboard-webhook-deactivate-a-{n}",
            "POST",
            "/dashboard/webhooks/{webhook_id}/deactivate",
            (lambda n: lambda w: Call(who="session", params={"webhook_id": str(w.endpoints[n])}))(
                n
            ),
            html(404),
        )
        for n in (0, 1)
    ),
    Row("dashboard-secret", "POST", "/dashboard/webhooks/secret", session(), html(200)),
    Row(
        "dashboard-secret-rotate", "POST", "/dashboard/webhooks/secret/rotate", session(), html(200)
    ),
    Row(
        "dashboard-deliveries",
        "GET",
        "/dashboard/deliveries",
        lambda w: Call(who="session", query={"type": "cash_out", "status": "delivered"}),
        html(200, "No events"),
    ),
    *(
        Row(
            f"dashboard-resend-a-{kind}",
            "POST",
            "/dashboard/events/{event_id}/resend",
            (lambda k: lambda w: Call(who="session", params={"event_id": str(w.events[k])}))(kind),
            html(404),
        )
        for kind in ("cash_out", "cash_in")
    ),
    *(
        Row(
            f"dashboard-delivery-{role}-a-{n}",
            method,
            path,
            (lambda n: lambda w: Call(who="session", params={"delivery_id": str(w.deliveries[n])}))(
                n
            ),
            html(404),
        )
        for role, method, path in (
            ("page", "GET", "/dashboard/deliveries/{delivery_id}"),
            ("resend", "POST", "/dashboard/deliveries/{delivery_id}/resend"),
        )
        for n in (0, -1)
    ),
    *(
        Row(
            f"dashboard-webhook-test-a-{n}",
            "POST",
            "/dashboard/webhooks/{webhook_id}/test",
            (lambda n: lambda w: Call(who="session", params={"webhook_id": str(w.endpoints[n])}))(
                n
            ),
            html(404),
        )
        for n in (0, 1)
    ),
    Row(
        "dashboard-other-page-a-uuid",
        "GET",
        "/dashboard/{rest:path}",
        lambda w: Call(who="session", params={"rest": str(w.tx["cash_out"]["transaction_id"])}),
        html(404),
    ),
    Row("dashboard-logout", "POST", "/dashboard/logout", session(), signed_out),
    Row("metrics", "GET", "/metrics", lambda w: Call(who="anonymous"), no_leak_only),
    *API_PIX_ROWS,
]

BY_DESIGN: dict[tuple[str, str], str] = {
    ("GET", "/loc/{token}"): "unauthenticated by design (the payer's bank fetches the charge) "
    "and keyed by a 128-bit random token: test_location_shows_only_the_named_charge",
    ("GET", "/qr/v2/{token}"): "the same payload at the API Pix's path, as unauthenticated and "
    "keyed by the same token: test_location_shows_only_the_named_charge",
    ("POST", PAY): "the outside world pays any charge by its code (sandbox only); refused for a "
    "paid charge in ROWS: test_sandbox_pay_reaches_only_the_named_charge",
    ("POST", "/api/pix/cash-out-qrcode"): "paying another account's charge is the point of a QR "
    "cash-out; refusals and externalIds in ROWS: test_qr_cash_out_pays_only_the_named_charge",
}

NAMES_NO_OBJECT: dict[tuple[str, str], str] = {
    ("GET", "/healthz"): "liveness, a constant",
    ("GET", "/readyz"): "readiness, the database answers",
    ("GET", "/.well-known/jwks.json"): "public token-verification keys",
    ("GET", "/.well-known/pix-jwks.json"): "public location-signing keys",
    ("GET", "/docs"): "static Swagger UI",
    ("GET", "/dashboard/login"): "the dashboard's sign-in form",
}


def api_routes() -> set[tuple[str, str]]:
    """Every route as mounted: `ROUTERS` at the root, `API_PIX_ROUTERS` under the API Pix's
    default base path."""
    mounted = [("", r) for r in ROUTERS] + [(API_PIX, r) for r in API_PIX_ROUTERS]
    return {
        (method, prefix + route.path)
        for prefix, router in mounted
        for route in router.routes
        if isinstance(route, APIRoute)
        for method in route.methods or ()
    }
