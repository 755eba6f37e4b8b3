# The syslog module, as glibc answers it in the sandbox: there is no
# /dev/log (nor /dev/console for LOG_CONS), so a message reaches only
# stderr, under LOG_PERROR, as "ident[pid]: message". Under wazero the
# module is CPython's own, over python/wasi/_apysup_messages.c. stderr is
# read back through a file opened in its place (descriptor 2).
import os
import sys
import syslog

print(sorted(n for n in dir(syslog) if n.startswith("LOG_")))
print("LOG_MASK", syslog.LOG_MASK(syslog.LOG_ERR), "LOG_UPTO", syslog.LOG_UPTO(syslog.LOG_WARNING))
print("masks", syslog.setlogmask(0), syslog.setlogmask(syslog.LOG_UPTO(syslog.LOG_WARNING)), syslog.setlogmask(0))

sys.stderr.flush()
os.close(2)
fd = os.open("stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
print("stderr reopened as", fd)

syslog.syslog("without LOG_PERROR: nowhere")
syslog.openlog("tag", syslog.LOG_PID | syslog.LOG_PERROR | syslog.LOG_CONS)
syslog.syslog(syslog.LOG_ERR, "an error")
syslog.syslog(syslog.LOG_INFO, "masked out")
syslog.syslog(syslog.LOG_ERR, "ends with a newline\n")
syslog.syslog(syslog.LOG_ERR, "")
syslog.syslog(syslog.LOG_ERR | syslog.LOG_LOCAL3, "with a facility")
syslog.syslog(0x10000 | syslog.LOG_ERR, "unknown bits")
syslog.syslog(syslog.LOG_WARNING, "percent %s %d stays")
syslog.setlogmask(0xFF)
syslog.syslog("default priority, unmasked")
syslog.closelog()
syslog.syslog(syslog.LOG_ERR, "after closelog: reopened without options")
syslog.openlog(logoption=syslog.LOG_PERROR)
syslog.syslog(syslog.LOG_ERR, "the script's name as ident")
syslog.openlog("", syslog.LOG_PERROR)
syslog.syslog(syslog.LOG_ERR, "an empty ident")
syslog.closelog()
os.close(fd)
print(open("stderr.txt").read(), end="")
