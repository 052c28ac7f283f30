"""The public module of ledger: what other features use of it, and the only module they
import."""

from pixgate.ledger.queries import journal
from pixgate.ledger.queries.transactions import BY_IDS as TRANSACTIONS_BY_IDS
from pixgate.ledger.queries.transactions import Transaction
from pixgate.ledger.schemas import ListedTransaction, PageMetadata, TransactionPage
from pixgate.ledger.service import transactions

__all__ = [
    "TRANSACTIONS_BY_IDS",
    "ListedTransaction",
    "PageMetadata",
    "Transaction",
    "TransactionPage",
    "journal",
    "transactions",
]
