import Foundation
import Testing

/// Reviewer test: Ctrl-Z where no shell does job control (`ssh -t host strata`,
/// a terminal or launcher that runs the explorer as its session's only
/// process). The explorer is the session leader of a fresh pty (python's
/// pty.fork, whose parent never sends SIGCONT, like sshd): its process group
/// is orphaned. suspend() sends itself SIGSTOP, which stops even an orphaned
/// group (SIGTSTP would be discarded there), so nobody can ever `fg` it: the
/// terminal stays frozen in shell mode and no key is answered.
@Suite(.serialized) struct SuspendReviewTests {
    typealias E2E = EndToEndTests

    static let driver = #"""
    import os, pty, sys, time, select, signal, fcntl, termios, struct
    binary, config = sys.argv[1], sys.argv[2]
    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-256color"; os.environ["LC_ALL"] = "C.UTF-8"
        os.execv(binary, [binary, "--config", config])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    def drain(seconds, until=None):
        buf = b""; end = time.time() + seconds
        while time.time() < end:
            r, _, _ = select.select([fd], [], [], 0.05)
            if r:
                try: buf += os.read(fd, 65536)
                except OSError: break
            if until and until in buf: break
        return buf
    def state():
        try:
            s = open(f"/proc/{pid}/stat").read(); return s[s.rindex(")") + 2]
        except FileNotFoundError: return "gone"
    print("up" if b"events" in drain(15, b"events") else "not up")
    os.write(fd, b"\x1a")  # Ctrl-Z
    end = time.time() + 3; st = None
    while time.time() < end:
        drain(0.02); st = state()
        if st == "T": break
    print("after ctrl-z:", st)
    os.write(fd, b"q")
    end = time.time() + 10; result = "no answer to q, state " + str(state())
    while time.time() < end:
        drain(0.05)
        w, status = os.waitpid(pid, os.WNOHANG)
        if w == pid: result = "quit"; break
    print(result)
    if result != "quit":
        os.kill(pid, signal.SIGCONT); os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0)
    """#

    @Test func ctrlZWithoutJobControlDoesNotFreezeTheExplorer() async throws {
        let config = try E2E.quickConfig()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let script = NSTemporaryDirectory() + "strata-pty-\(UUID().uuidString.prefix(8)).py"
        try Self.driver.write(toFile: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, E2E.binary, config]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(output.contains("up\n"), "\(output)")
        #expect(!output.contains("after ctrl-z: T"), "Ctrl-Z stopped the explorer with no job control to continue it:\n\(output)")
        #expect(output.contains("quit"), "\(output)")
    }
}
