print("the file does not compile"
