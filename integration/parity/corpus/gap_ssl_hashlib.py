import hashlib

for name in ("_ssl", "_hashlib", "ssl"):
    try:
        __import__(name)
        print(name, "imported")
    except ImportError as e:
        print(name, "failed:", e)
print("sha256 works:", hashlib.sha256(b"abc").hexdigest()[:16])
print("algorithms_available has sha256:", "sha256" in hashlib.algorithms_available)
print("pbkdf2:", hashlib.pbkdf2_hmac("sha256", b"pw", b"salt", 1000).hex()[:16])
try:
    print("scrypt:", hashlib.scrypt(b"pw", salt=b"s", n=16, r=1, p=1).hex()[:16])
except AttributeError as e:
    print("scrypt missing")
