"""The client's own PEP 517 build backend, standard library only.

`pip install ./clients/python` needs nothing from an index: no setuptools,
no wheel, so it works offline, in a fresh venv, on any Python >= 3.9 with
pip. It builds a pure-Python wheel of the apysup_client package (and, for
`pip install -e`, an editable wheel whose .pth names the source directory).
The metadata comes from pyproject.toml's [project] table.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = "apysup_client"


def _project():
    """name, version, description and requires-python of [project]."""
    with open(os.path.join(_HERE, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    table = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if table is None:
        raise RuntimeError("pyproject.toml has no [project] table")
    fields = {}
    for key in ("name", "version", "description", "requires-python"):
        m = re.search(r'^%s\s*=\s*"([^"\\]*)"\s*$' % re.escape(key), table.group(1), re.M)
        if m is None:
            raise RuntimeError("pyproject.toml [project] has no %s" % key)
        fields[key] = m.group(1)
    return fields


def _metadata(p):
    return (
        "Metadata-Version: 2.1\n"
        "Name: %s\nVersion: %s\nSummary: %s\nRequires-Python: %s\n"
        % (p["name"], p["version"], p["description"], p["requires-python"])
    ).encode()


def _dist(p):
    return "%s-%s" % (p["name"].replace("-", "_"), p["version"])


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d\n" % (name, digest, len(data))


def _wheel(wheel_directory, files):
    """Writes a wheel of files (archive name -> bytes); returns its name."""
    p = _project()
    dist = _dist(p)
    info = dist + ".dist-info"
    files = dict(files)
    files[info + "/METADATA"] = _metadata(p)
    files[info + "/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: apysup_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = "".join(_record_line(n, d) for n, d in sorted(files.items())) + info + "/RECORD,,\n"
    files[info + "/RECORD"] = record.encode()
    name = dist + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files.items():
            z.writestr(zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0)), d)
    return name


def _package_files():
    out = {}
    root = os.path.join(_HERE, _PACKAGE)
    for entry in sorted(os.listdir(root)):
        if entry.endswith(".py"):
            with open(os.path.join(root, entry), "rb") as f:
                out[_PACKAGE + "/" + entry] = f.read()
    return out


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _wheel(wheel_directory, {_PACKAGE + "_editable.pth": (_HERE + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = _dist(p)
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        members = ["pyproject.toml", "apysup_build.py"] + sorted(_package_files())
        for rel in members:
            with open(os.path.join(_HERE, rel), "rb") as f:
                data = f.read()
            ti = tarfile.TarInfo(base + "/" + rel)
            ti.size, ti.mode = len(data), 0o644
            tar.addfile(ti, io.BytesIO(data))
        pkg_info = _metadata(p)
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size, ti.mode = len(pkg_info), 0o644
        tar.addfile(ti, io.BytesIO(pkg_info))
    return name
