import string
import textwrap
import unicodedata

s = "The quick brown fox jumps over the lazy dog. " * 3
print(textwrap.fill(s, width=30))
print(textwrap.shorten(s, width=40, placeholder=" [...]"))
print(textwrap.indent(textwrap.dedent("""
    a
      b
    c"""), "> "))
print("%5.2f|%-6s|%04d|%x|%r" % (3.14159, "ab", 42, 255, "q"))
print("{:>10}|{:^10}|{:<10}|{:+.3e}|{:,}|{:_b}|{:%}".format("r", "c", "l", 12345.678, 10**9, 255, 0.25))
name, value = "width", 1 / 3
print(f"{name!r:>12} = {value:.5f} {value!s:.4} {'nested':*^12}")
print(string.Template("$who likes $what").substitute(who="tim", what="kung pao"))
print(string.ascii_letters, string.punctuation, string.capwords("hello   big world"))
u = "Ĉu vi parolas Esperanton? 日本語 😀 é"
print(u.upper(), u.casefold(), len(u), len(u.encode()), u.encode("utf-16-le")[:8])
print(unicodedata.name("😀"), unicodedata.category("日"), unicodedata.normalize("NFD", "é").encode())
print(unicodedata.unidata_version, "ß".upper(), "ǅ".istitle(), "١٢٣".isdigit(), int("١٢٣"))
print(sorted(["b", "A", "a", "é", "B"]), "straße.example".encode("idna"), "bücher".encode("punycode"))
print(repr("tab\there"), ascii("é😀"), "x".center(7, "-"), "a,b,,c".split(","), " pad ".strip())
