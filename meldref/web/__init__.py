"""The web server under `replay serve` and `contest serve`: Starlette on uvicorn.

`options` the settings a server runs with (address, public host names, the proxies whose
forwarded address is believed, TLS, request size limits), `guard` what every request passes
before a page sees it (Host check, forwarded address, method, body size, headers, access log),
`server` a server bound to its port, served from a thread or the command's own. It imports
nothing of meldref: the replays' and the contest's pages sit above it and bring their routes.
"""
