"""How a request reaches its operation: the route class, the screen it passes first, the
JSON body read once, the operations called directly, the query parameters several lists
share, and the methods a path answers (HEAD, and `Allow` on a 405)."""
