"""Boot the wakelockd test guest in QEMU and talk to it.

The guest has three serial ports: ttyS0 is the console (QEMU's stdout, where
the guest prints TAP/KTAP and host requests), ttyS1 is the "modem" (a Unix
socket the host writes calls into), ttyS2 is the control port (the host
answers requests there). A QMP socket lets the host wake the guest from S3.

Used by scripts/run-guest (guest test plans) and tests/e2e (the race test).
"""
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time

TIMESTAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
REQUEST = re.compile(r'@@HOST (\d+) (.*)$')


class GuestError(Exception):
    pass


def qemu_command(kernel, initrd, append, sockdir, memory='512M', smp=2, accel='tcg',
                 usb_modem=False, disk=None, tests_disk=None, overlay=None, scratch_disk=None):
    """The QEMU command line: a PC with ACPI S3 and an RTC, three UARTs, QMP.

    usb_modem adds the PIIX3 UHCI controller and QEMU's usb-serial device (an
    FTDI FT232, the guest's ttyUSB0) on another Unix socket. Off by default:
    a USB bus is activity (hub polling, wakeup sources) the other tests do not
    need.

    disk boots a root file system image (raw ext4) instead of an initramfs:
    the guest's /dev/vda, root=/dev/vda. QEMU's snapshot=on puts a temporary
    copy-on-write overlay in front of it, so a run never changes the image
    (the next run, and a cached image, start pristine). tests_disk is a
    second raw image, read-only, the guest's /dev/vdb (the tests).

    overlay (with disk) is a qcow2 file on top of disk that the guest boots
    instead of snapshot=on's: it outlives this QEMU, so that the next boot
    of a run finds the root as the last one left it (a hibernated guest
    must resume on the very file system it hibernated). scratch_disk is a
    raw image the guest may write, its next disk (/dev/vdc after the tests).
    Both belong to the run (RunDisks), never to the cache.
    """
    usb = ['-usb', '-chardev', f'socket,id=usbmodem,path={sockdir}/usbmodem.sock,'
                               'server=on,wait=off',
           '-device', 'usb-serial,chardev=usbmodem'] if usb_modem else []
    if (initrd is None) == (disk is None):
        raise GuestError('boot either an initramfs or a disk image')
    if overlay and not disk:
        raise GuestError('an overlay needs the disk it lies on')
    if initrd:
        boot = ['-initrd', initrd]
    elif overlay:
        boot = ['-drive', f'file={overlay},format=qcow2,if=virtio']
    else:
        boot = ['-drive', f'file={disk},format=raw,if=virtio,snapshot=on']
    if tests_disk:
        boot += ['-drive', f'file={tests_disk},format=raw,if=virtio,readonly=on']
    if scratch_disk:
        boot += ['-drive', f'file={scratch_disk},format=raw,if=virtio']
    if disk:
        append = f'root=/dev/vda rw {append}'
    return [
        'qemu-system-x86_64', '-machine', f'pc,accel={accel}', '-m', memory,
        '-smp', str(smp), '-display', 'none', '-monitor', 'none', '-no-reboot',
        '-rtc', 'base=utc',
        '-serial', 'stdio',
        '-serial', f'unix:{sockdir}/modem.sock,server=on,wait=off',
        '-serial', f'unix:{sockdir}/ctl.sock,server=on,wait=off',
        '-qmp', f'unix:{sockdir}/qmp.sock,server=on,wait=off',
        '-kernel', kernel,
        # Under TCG a resume from S3 can make the guest's clock jump by tens
        # of seconds (seen: "hrtimer: interrupt took 2162089329 ns"), which
        # the RCU stall detector reports as a 26 s stall. A 5 min threshold
        # still catches a real hang within every run's timeout.
        '-append', f'console=ttyS0 no_console_suspend panic=-1 '
                   f'rcupdate.rcu_cpu_stall_timeout=300 {append}'.strip(),
    ] + boot + usb


def choose_accel(kernel, initrd, wanted, cache_dir):
    """'tcg' or 'kvm'. 'auto' probes KVM by booting the guest for real.

    /dev/kvm opening is no proof: on nested hypervisors it opens, and then
    QEMU aborts or crawls. So boot the probe plan under KVM with a short
    deadline, and remember the answer for this machine.
    """
    if wanted != 'auto':
        return wanted
    if not os.access('/dev/kvm', os.R_OK | os.W_OK):
        return 'tcg'
    cache = os.path.join(cache_dir, f'accel-probe-{os.uname().nodename}')
    try:
        with open(cache) as f:
            return f.read().strip()
    except OSError:
        pass
    if initrd is None:
        # The probe boots the probe plan's initramfs; without one (a disk
        # boot) TCG, and nothing is remembered.
        return 'tcg'
    verdict = 'tcg'
    try:
        g = Guest(kernel, initrd, 'wlplan=probe kunit.enable=0', accel='kvm')
        deadline = time.monotonic() + 20
        try:
            while time.monotonic() < deadline:
                lines = g.poll(0.2)
                if lines is None:
                    break
                if any(line.startswith('# WLTEST END') for line in lines):
                    verdict = 'kvm'
                    break
        finally:
            g.close()
    except GuestError:
        pass
    os.makedirs(cache_dir, exist_ok=True)
    with open(cache, 'w') as f:
        f.write(verdict + '\n')
    return verdict


class RunDisks:
    """The disks of one run that must last across its boots, and no longer.

    overlay: a qcow2 file on top of the cached image (qemu-img create -b),
    so the image itself is never written; scratch: a blank raw file of
    scratch_size bytes (sparse), e.g. the guest's swap. Both live in a
    directory of their own under parent; close() removes it.
    """

    def __init__(self, disk, parent, persist=False, scratch_size=0):
        self.dir = tempfile.mkdtemp(prefix='wlrun-disks-', dir=parent)
        self.overlay = self.scratch = None
        try:
            if persist:
                self.overlay = os.path.join(self.dir, 'root.qcow2')
                r = subprocess.run(['qemu-img', 'create', '-q', '-f', 'qcow2', '-b',
                                    os.path.abspath(disk), '-F', 'raw', self.overlay],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                if r.returncode:
                    raise GuestError(f'qemu-img create: {r.stdout.decode(errors="replace")}')
            if scratch_size:
                self.scratch = os.path.join(self.dir, 'scratch.img')
                with open(self.scratch, 'wb') as f:
                    f.truncate(scratch_size)
        except (GuestError, OSError):
            self.close()
            raise

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def parse_size(text):
    """'1G', '512M', '4096' (bytes) -> bytes."""
    m = re.fullmatch(r'(\d+)([KMG]?)', text.strip().upper())
    if not m or not int(m.group(1)):
        raise ValueError(f'not a size: {text!r} (N, NK, NM or NG)')
    return int(m.group(1)) << {'': 0, 'K': 10, 'M': 20, 'G': 30}[m.group(2)]


class Guest:
    """A running guest. Call poll() in a loop; it returns console lines."""

    def __init__(self, kernel, initrd, append='', log_path=None, accel='tcg',
                 memory='512M', usb_modem=False, disk=None, tests_disk=None,
                 overlay=None, scratch_disk=None, log_append=False):
        self.sockdir = tempfile.mkdtemp(prefix='wlguest-')
        cmd = qemu_command(kernel, initrd, append, self.sockdir, memory=memory,
                           accel=accel, usb_modem=usb_modem, disk=disk,
                           tests_disk=tests_disk, overlay=overlay,
                           scratch_disk=scratch_disk)
        self.log = open(log_path, 'a' if log_append else 'w') if log_path else None
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.modem = self._connect('modem.sock')
        self.usb_modem = self._connect('usbmodem.sock') if usb_modem else None
        self.ctl = self._connect('ctl.sock')
        self.qmp_sock = self._connect('qmp.sock')
        self.qmp_buf = b''
        self._qmp_read_reply()          # greeting
        self.qmp('qmp_capabilities')
        self.console_buf = b''
        self.modem_rx = bytearray()     # bytes the guest sent on ttyS1

    def _connect(self, name):
        path = os.path.join(self.sockdir, name)
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                out = self.proc.stdout.read().decode(errors='replace')
                raise GuestError(f'QEMU exited with {self.proc.returncode}: {out[-2000:]}')
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                return s
            except OSError:
                s.close()
                if time.monotonic() > deadline:
                    raise GuestError(f'QEMU never opened {path}')
                time.sleep(0.05)

    # -- QMP ---------------------------------------------------------------
    def _qmp_read_reply(self):
        self.qmp_sock.settimeout(10)
        while True:
            while b'\n' not in self.qmp_buf:
                chunk = self.qmp_sock.recv(65536)
                if not chunk:
                    raise GuestError('QMP connection closed')
                self.qmp_buf += chunk
            line, self.qmp_buf = self.qmp_buf.split(b'\n', 1)
            msg = json.loads(line)
            if 'event' not in msg:
                return msg

    def qmp(self, command, **arguments):
        req = {'execute': command}
        if arguments:
            req['arguments'] = arguments
        self.qmp_sock.sendall(json.dumps(req).encode() + b'\n')
        reply = self._qmp_read_reply()
        if 'error' in reply:
            raise GuestError(f'QMP {command}: {reply["error"]}')
        return reply.get('return')

    def status(self):
        return self.qmp('query-status')['status']

    # -- serial ports --------------------------------------------------------
    def modem_write(self, data):
        self.modem.sendall(data)

    def usb_modem_write(self, data):
        if self.usb_modem is None:
            raise GuestError('no USB modem (run-guest --usb-modem)')
        self.usb_modem.sendall(data)

    def control_write(self, text):
        self.ctl.sendall(text.encode() + b'\n')

    # -- event loop ----------------------------------------------------------
    def poll(self, timeout):
        """Wait up to timeout s; return complete console lines (text) read.

        Also collects what the guest sends on the modem port into modem_rx.
        Returns None once QEMU has exited and its output is drained.
        """
        lines = []
        rlist = [self.proc.stdout, self.modem]
        ready, _, _ = select.select(rlist, [], [], max(0.0, timeout))
        if self.modem in ready:
            data = self.modem.recv(65536)
            if data:
                self.modem_rx += data
        if self.proc.stdout in ready:
            data = os.read(self.proc.stdout.fileno(), 65536)
            if not data:
                self.proc.wait()
                if self.console_buf:
                    lines.append(self._line(self.console_buf))
                    self.console_buf = b''
                return lines or None
            self.console_buf += data
            while b'\n' in self.console_buf:
                raw, self.console_buf = self.console_buf.split(b'\n', 1)
                lines.append(self._line(raw))
        return lines

    def _line(self, raw):
        text = raw.decode(errors='replace').rstrip('\r')
        if self.log:
            self.log.write(text + '\n')
            self.log.flush()
        return TIMESTAMP.sub('', text)

    def close(self):
        """Always called: QEMU must never outlive its runner."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for s in (self.modem, self.usb_modem, self.ctl, self.qmp_sock):
            if s is not None:
                s.close()
        if self.log:
            self.log.close()
        shutil.rmtree(self.sockdir, ignore_errors=True)


class HostActions:
    """Carries out the "@@HOST id CMD ..." requests guest tests print.

    Commands are documented in tests/guest/lib.sh and docs/harness.md.
    """

    def __init__(self, guest, boots=1):
        self.guest = guest
        self.pending = []    # [(predicate, action)] checked on every tick
        self.expired = []    # "when" requests whose pattern never showed
        self.cancelled = set()  # ids of "every" requests to stop
        self.poweroff_expected = None  # "expect-poweroff NAME": the test's name
        self.boots_left = boots - 1     # boot-again requests still allowed
        self.boot_again = None          # monotonic time of an accepted one

    def request(self, line):
        m = REQUEST.search(line)
        if not m:
            return False
        rid, words = m.group(1), m.group(2).split()
        try:
            self._start(rid, words, ack=True)
        except (GuestError, ValueError, IndexError, OSError) as e:
            self.guest.control_write(f'@@NAK {rid} {e}')
        return True

    def _ack(self, rid, payload=''):
        self.guest.control_write(f'@@ACK {rid} {payload}'.rstrip())

    def _start(self, rid, words, ack):
        """Run words now, or schedule them; ack (if asked) once accepted."""
        cmd, args = words[0], words[1:]
        g = self.guest
        if cmd == 'after':
            due = time.monotonic() + int(args[0]) / 1000
            self.pending.append((lambda line: time.monotonic() >= due,
                                 lambda: self._start(rid, args[1:], ack=False)))
        elif cmd == 'when':
            pattern, deadline = re.compile(args[0]), time.monotonic() + 60

            def fire():
                if time.monotonic() <= deadline:
                    self._start(rid, args[1:], ack=False)
                else:
                    self.expired.append(' '.join(words))
            self.pending.append((
                lambda line: (line is not None and pattern.search(line))
                or time.monotonic() > deadline, fire))
        elif cmd == 'every':
            # Repeat CMD every MS ms until "cancel <id>": a wake source that
            # outlasts any schedule, for loops that stop on what they receive.
            period = int(args[0]) / 1000

            def repeat():
                if rid in self.cancelled:
                    return
                self._start(rid, args[1:], ack=False)
                due = time.monotonic() + period
                self.pending.append((lambda line: time.monotonic() >= due, repeat))
            repeat()
        elif cmd == 'expect-poweroff':
            # The test's last act powers the guest off (a critical battery's
            # action): QEMU exiting then is the test passing (run-guest).
            self.poweroff_expected = args[0]
        elif cmd == 'boot-again':
            # The guest is about to power off mid-plan (hibernation): boot
            # the same disks again and keep reading (run-guest --boots).
            if self.boots_left <= 0:
                raise ValueError('no boot left for boot-again (run-guest --boots N)')
            self.boots_left -= 1
            self.boot_again = time.monotonic()
        elif cmd == 'cancel':
            self.cancelled.add(args[0])
        elif cmd == 'modem-write':
            g.modem_write(' '.join(args).encode())
        elif cmd == 'modem-hex':
            g.modem_write(bytes.fromhex(args[0]))
        elif cmd == 'usb-write':
            g.usb_modem_write(' '.join(args).encode())
        elif cmd == 'usb-fill':
            # N bytes at once ("0123456789" repeated): more than a reader
            # that does not read can buffer.
            n = int(args[0])
            g.usb_modem_write((b'0123456789' * (n // 10 + 1))[:n])
        elif cmd == 'modem-fill':
            n = int(args[0])
            g.modem_write((b'0123456789' * (n // 10 + 1))[:n])
        elif cmd == 'wakeup':
            # Only a suspended guest can be woken: wait until QEMU says so.
            deadline = time.monotonic() + 60
            self.pending.append((
                lambda line: g.status() == 'suspended' or time.monotonic() > deadline,
                lambda: g.qmp('system_wakeup')))
        elif cmd == 'modem-read':
            want, due = int(args[0]), time.monotonic() + int(args[1]) / 1000

            def reply():
                data = bytes(g.modem_rx[:want])
                del g.modem_rx[:want]
                self._ack(rid, data.hex())
            self.pending.append((
                lambda line: len(g.modem_rx) >= want or time.monotonic() >= due,
                reply))
            return                       # acked by reply()
        else:
            raise ValueError(f'unknown host command {cmd!r}')
        if ack:
            self._ack(rid)

    def tick(self, line=None):
        """Fire pending actions whose moment has come (line: a console line)."""
        for item in list(self.pending):
            predicate, action = item
            if predicate(line):
                self.pending.remove(item)
                action()


# --- kernel splats -------------------------------------------------------------
# What counts as a kernel bug on the console, for every guest run (run-guest,
# the race test).
SPLAT = re.compile(
    r'BUG:|WARNING:|Oops|Kernel panic|KASAN:|UBSAN:|general protection fault|'
    r'possible (circular|recursive) locking|inconsistent lock state|'
    r'sleeping function called from invalid context|suspicious RCU usage|'
    r'INFO: task .* blocked|hung_task|Call Trace:')
# A freeze aborted by a wakeup event lists the tasks that refused to freeze,
# each with a "Call Trace:": information, not a bug. The list ends when the
# tasks are thawed.
FREEZE_ABORT = re.compile(r'Freezing .* aborted after .* refusing to freeze')
FREEZE_ABORT_END = re.compile(r'Restarting tasks|OOM killer enabled|PM: suspend exit')


class SplatFilter:
    """Tells kernel splats from console lines that only look like one."""

    def __init__(self):
        self.in_freeze_abort = False

    def is_splat(self, line):
        if FREEZE_ABORT.search(line):
            self.in_freeze_abort = True
        elif FREEZE_ABORT_END.search(line):
            self.in_freeze_abort = False
        if line.lstrip().startswith('#'):
            return False
        if self.in_freeze_abort and 'Call Trace:' in line:
            return False
        return bool(SPLAT.search(line))
