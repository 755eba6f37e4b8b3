import base64
import gzip
import hashlib
import hmac
import io
import struct
import zlib

data = ("apysup parity " * 200).encode()
print(hashlib.sha256(data).hexdigest())
print(hashlib.sha1(data).hexdigest(), hashlib.md5(data).hexdigest())
print(hashlib.sha512(b"").hexdigest()[:32], hashlib.blake2b(b"x", digest_size=16).hexdigest())
print(hashlib.sha3_256(b"abc").hexdigest())
print(hmac.new(b"key", b"message", "sha256").hexdigest())
z = zlib.compress(data, 9)
print(len(z), zlib.crc32(data), zlib.adler32(data), zlib.decompress(z) == data)
buf = io.BytesIO()
with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as f:
    f.write(data)
print(hashlib.sha256(buf.getvalue()).hexdigest(), gzip.decompress(buf.getvalue()) == data)
print(base64.b64encode(b"\x00\xffhello"), base64.urlsafe_b64encode(b"\xfb\xff"), base64.b32encode(b"abc"))
print(base64.b16decode("CAFE"), base64.a85encode(b"parity"))
packed = struct.pack("<iHd4s?", -5, 65535, 3.25, b"ab", True)
print(packed.hex(), struct.unpack("<iHd4s?", packed), struct.calcsize("@iq"))
print(int.from_bytes(b"\x01\x02", "big"), (1025).to_bytes(4, "little"))
