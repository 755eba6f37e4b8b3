# HTTPS from a sandbox without a network: natively the connection fails
# as a plain one does (name resolution, nothing reachable), and urllib
# says so with URLError, an OSError. Under wazero, whose build has no ssl
# module, every https URL was "unknown url type: https" and
# http.client.HTTPSConnection an AttributeError, which a script's
# `except OSError` fallback did not catch (wasi-https-extmods.patch).
import http.client
import urllib.error
import urllib.request

for url in ("https://example.com/data.csv", "http://example.com/data.csv"):
    try:
        urllib.request.urlopen(url, timeout=5)
    except urllib.error.URLError as e:
        print(url.split(":")[0], "URLError:", e.reason, isinstance(e, OSError))
print("HTTPSConnection" in dir(http.client), "HTTPSHandler" in dir(urllib.request))
print(sorted(type(h).__name__ for h in urllib.request.build_opener().handlers if "HTTP" in type(h).__name__))
for cls in (http.client.HTTPSConnection, http.client.HTTPConnection):
    conn = cls("example.com", timeout=3)
    print(cls.__name__, conn.port)
    try:
        conn.request("GET", "/")
    except OSError as e:
        print(cls.__name__, "OSError:", e)
try:
    urllib.request.urlretrieve("https://example.com/f.zip", "f.zip")
except OSError as e:
    print("urlretrieve", type(e).__name__, e)
