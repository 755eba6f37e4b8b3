# Run twice per backend by TestStrHashSeed: are str hashes the same from one
# run to the next?
print(hash("abc"), hash(b"abc"))
