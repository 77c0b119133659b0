"""A small inventory service: a WSGI app on the standard library's server, nothing to install."""

import os
from wsgiref.simple_server import make_server

ITEMS = {"1": {"id": "1", "name": "kettle", "price": 25.0}}


def price_with_tax(price, rate=0.2):
    return round(price * (1 + rate), 2)


def app(environ, start_response):
    path = environ.get("PATH_INFO", "")
    if path == "/health":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]
    if path.startswith("/items/"):
        item = ITEMS.get(path.rsplit("/", 1)[1])
        if item is None:
            start_response("404 Not Found", [("Content-Type", "application/json")])
            return [b'{"error": "no such item"}']
        body = dict(item, price_with_tax=price_with_tax(item["price"]))
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps(body).encode()]
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"not found"]


if __name__ == "__main__":
    make_server("127.0.0.1", int(os.environ.get("PORT", "8000")), app).serve_forever()
