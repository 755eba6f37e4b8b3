# A CPU spin with a spinning child, under a short timeout.
report_host_uid()
if os.fork() == 0:
    while True:
        pass
emit("ALLOWED", "spinning")
while True:
    pass
