import re

text = "alice@example.com, bob.smith@mail.example.org; carol@x.io"
print(re.findall(r"[\w.]+@[\w.]+", text))
print(re.sub(r"(\w+)@(\w+)", r"\2 at \1", text))
m = re.match(r"(?P<user>\w+)@(?P<host>[\w.]+)", text)
print(m.groupdict(), m.span())
print(re.split(r"[,;]\s*", text))
print(re.fullmatch(r"\d{4}-\d{2}-\d{2}", "2024-02-29") is not None)
print(re.compile(r"straße", re.IGNORECASE).search("STRASSE Straße").group())
print([m.start() for m in re.finditer(r"a", "banana")])
