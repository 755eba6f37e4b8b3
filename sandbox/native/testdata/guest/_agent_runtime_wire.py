# test stand-in
