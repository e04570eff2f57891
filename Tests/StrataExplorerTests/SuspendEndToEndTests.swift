import Foundation
import Testing

/// Ctrl-Z did nothing (#35): in a shell with job control it now gives the
/// terminal back and stops the explorer; `fg` brings it back, redrawn.
@Suite(.serialized) struct SuspendEndToEndTests {
    typealias E2E = EndToEndTests

    @Test func ctrlZSuspendsAndFgRedraws() async throws {
        let config = try E2E.quickConfig()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }
        try tmux("new-session", "-d", "-s", "ui", "-x", "120", "-y", "40", "env PS1='shell$ ' bash --norc --noprofile -i")
        _ = await tmux.waitFor { $0.contains("shell$") }
        try tmux("send-keys", "-t", "ui", "env TERM=xterm-256color LC_ALL=C.UTF-8 \(E2E.binary) --config \(config)", "Enter")
        let up = await tmux.waitFor { $0.contains("events") }
        #expect(up.contains("events"), "\(up)")
        try tmux("send-keys", "-t", "ui", "C-z")
        let stopped = await tmux.waitFor { $0.contains("Stopped") && $0.contains("shell$") }
        #expect(stopped.contains("Stopped"), "Ctrl-Z did not stop the explorer:\n\(stopped)")
        try tmux("send-keys", "-t", "ui", "fg", "Enter")
        let back = await tmux.waitFor { $0.contains("events") && !$0.contains("Stopped") }
        #expect(back.contains("events"), "not redrawn after fg:\n\(back)")
        // It answers keys again (a key typed while the shell was giving the
        // terminal back can be flushed with the mode switch: type again).
        var quit = ""
        for _ in 0..<10 where !(quit.contains("shell$") && !quit.contains("events")) {
            try tmux("send-keys", "-t", "ui", "q")
            quit = await tmux.waitFor(1) { !$0.contains("events") && $0.contains("shell$") }
        }
        let state = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        let ps = Process()
        ps.executableURL = URL(fileURLWithPath: "/bin/ps")
        ps.arguments = ["-o", "pid,stat,wchan:24,cmd", "-C", "strata"]
        let out = Pipe(); ps.standardOutput = out
        try? ps.run(); ps.waitUntilExit()
        let processes = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(quit.contains("shell$") && !quit.contains("events"), "q did not quit after fg:\n\(quit)\n\(processes)\n\(state)")
    }
}
