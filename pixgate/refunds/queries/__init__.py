"""The refunds' queries: refund rows and what is left to refund (`refunds`), the PIX an
account received with their refunds (`received`)."""
