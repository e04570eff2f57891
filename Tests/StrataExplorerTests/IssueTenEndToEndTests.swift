import Foundation
import Testing

/// Issue 10: defects seen on the real screen (tmux) and on the command line.
@Suite(.serialized) struct IssueTenEndToEndTests {
    typealias E2E = EndToEndTests

    static func config(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "strata-i10-\(UUID().uuidString.prefix(8)).yaml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static let smallMemory = """
    name: i10
    levels:
      - name: L1
        kind: memory
        capacity: 1KiB
        condition: memory
      - name: origin
        kind: origin
        latency: 1ms
        value-size: 4KiB
    """

    static func start(_ tmux: E2E.Tmux, _ command: String, width: Int = 120, height: Int = 40) async throws -> String {
        try tmux("new-session", "-d", "-s", "ui", "-x", "\(width)", "-y", "\(height)", command + "; sleep 30")
        return await tmux.waitFor { $0.contains("events") }
    }

    // D1: a failed back-fill is logged into the event log (and --log-file), never over the screen.
    @Test func backfillFailureLogsIntoTheEventLogNotOverTheScreen() async throws {
        let config = try Self.config(Self.smallMemory)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }
        _ = try await Self.start(tmux, "env TERM=xterm-256color LC_ALL=C.UTF-8 \(E2E.binary) --config \(config)")
        try tmux("send-keys", "-t", "ui", ":get big", "Enter")
        let screen = await tmux.waitFor { $0.contains("strata.backfill") }
        let lines = screen.components(separatedBy: "\n")
        let logged = lines.filter { $0.contains("strata.backfill") }
        #expect(!logged.isEmpty, "the failure is in the event log:\n\(screen)")
        #expect(logged.allSatisfy { $0.hasPrefix("│ ") }, "only inside the event log's box:\n\(screen)")
        #expect(lines.first?.contains("strata · i10") == true, "title intact:\n\(screen)")
        try tmux("send-keys", "-t", "ui", "q")
    }

    // D1: `--log-file PATH` also receives the logs.
    @Test func logFileReceivesTheLogs() async throws {
        let config = try Self.config(Self.smallMemory)
        let logFile = NSTemporaryDirectory() + "strata-i10-\(UUID().uuidString.prefix(6)).log"
        defer { try? FileManager.default.removeItem(atPath: config); try? FileManager.default.removeItem(atPath: logFile) }
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }
        _ = try await Self.start(tmux, "env TERM=xterm-256color LC_ALL=C.UTF-8 \(E2E.binary) --config \(config) --log-file \(logFile)")
        try tmux("send-keys", "-t", "ui", ":get big", "Enter")
        _ = await tmux.waitFor { $0.contains("strata.backfill") }
        let file = await Self.poll { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }
        #expect(file.contains("strata.backfill"), "log file: \(file)")
        try tmux("send-keys", "-t", "ui", "q")
    }

    // D3: Home and End (CSI 1~ / 4~ from tmux) are keys, not Esc + characters.
    @Test func homeAndEndAreNotReadAsEscapeAndCharacters() async throws {
        let config = try E2E.quickConfig()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }
        let ready = try await Self.start(tmux, "env TERM=xterm-256color LC_ALL=C.UTF-8 \(E2E.binary) --config \(config)")
        #expect(ready.contains("[1 on]"), "the pane shows its toggle's digit")
        try tmux("send-keys", "-t", "ui", "Home")
        try tmux("send-keys", "-t", "ui", "End")
        try tmux("send-keys", "-t", "ui", ":get ab")
        try tmux("send-keys", "-t", "ui", "Home")
        try tmux("send-keys", "-t", "ui", "End")
        try tmux("send-keys", "-t", "ui", "PageUp")
        try tmux("send-keys", "-t", "ui", "c", "Enter")
        // The event line, not the status line: a capture can land between the two.
        let screen = await tmux.waitFor { $0.contains("get abc  L1 miss") }
        #expect(screen.contains("get abc  L1 miss"), "the command line survived Home/End:\n\(screen)")
        #expect(screen.contains("[1 on]") && !screen.contains("OFF]"), "toggle 1 did not flip:\n\(screen)")
        try tmux("send-keys", "-t", "ui", "q")
    }

    // D2: a 100,000-character paste into the command line is taken whole and quickly.
    @Test func pastingALongValueIntoTheCommandLineFinishes() async throws {
        let config = try E2E.quickConfig()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }
        _ = try await Self.start(tmux, "env TERM=xterm-256color LC_ALL=C.UTF-8 \(E2E.binary) --config \(config)")
        let pasteFile = NSTemporaryDirectory() + "strata-i10-paste-\(UUID().uuidString.prefix(6))"
        defer { try? FileManager.default.removeItem(atPath: pasteFile) }
        try ("set big " + String(repeating: "x", count: 100_000)).write(toFile: pasteFile, atomically: true, encoding: .utf8)
        try tmux("send-keys", "-t", "ui", ":")
        try tmux("load-buffer", "-b", "p", pasteFile)
        try tmux("paste-buffer", "-b", "p", "-t", "ui")
        try tmux("send-keys", "-t", "ui", "Enter")
        let screen = await tmux.waitFor(30) { $0.contains("set big: 100000 bytes") || $0.contains("set big failed") }
        #expect(screen.contains("set big"), "the paste was taken and run:\n\(screen)")
        try tmux("send-keys", "-t", "ui", "C-c")
        let gone = await tmux.waitFor(10) { !$0.contains("events") }
        #expect(!gone.contains("events"), "Ctrl-C still quits")
    }

    // D8: in the C locale the screen is ASCII, as the README promises.
    @Test func cLocaleDrawsASCII() async throws {
        let config = try E2E.quickConfig()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let tmux = E2E.Tmux()
        defer { _ = try? tmux("kill-server") }
        _ = try await Self.start(tmux, "env TERM=xterm-256color LC_ALL=C LANG=C \(E2E.binary) --config \(config)")
        try tmux("send-keys", "-t", "ui", ":get user:7", "Enter")
        let screen = await tmux.waitFor { $0.contains("back-filled") }
        #expect(screen.contains("+- L1 "), "ASCII borders:\n\(screen)")
        // A slow miss shows its time ("L1 miss 1ms -> L2 miss"): the arrow is what is checked.
        #expect(screen.range(of: #"L1 miss( [0-9.]+[mu]?s)? -> L2 miss"#, options: .regularExpression) != nil,
                "ASCII arrows:\n\(screen)")
        #expect(screen.unicodeScalars.allSatisfy { $0.isASCII }, "nothing but ASCII:\n\(screen)")
        try tmux("send-keys", "-t", "ui", "q")
    }

    // D11: a misspelt subcommand gets a suggestion; errors share one style and exit code.
    @Test func misspeltSubcommandGetsADidYouMean() async throws {
        let result = try await E2E.run(["chek", "x.yaml"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("strata: error:"), "\(result.stderr)")
        #expect(result.stderr.contains("did you mean 'check'"), "\(result.stderr)")
        let badOption = try await E2E.run(["--hz", "500"])
        #expect(badOption.status == 2, "usage errors exit 2 like every other refusal: \(badOption.status)")
        #expect(badOption.stderr.hasPrefix("strata: error:"), "\(badOption.stderr)")
        let missing = try await E2E.run(["check", "/nonexistent/strata.yaml"])
        #expect(missing.stderr.hasPrefix("strata: error:"), "\(missing.stderr)")
    }

    // D11: `strata --help` shows the explorer's own options.
    @Test func topLevelHelpShowsTheExplorerOptions() async throws {
        let help = try await E2E.run(["--help"])
        for option in ["--config", "--theme", "--hz", "--ascii", "--no-color", "--log-file"] {
            #expect(help.stdout.contains(option), "\(option) missing from:\n\(help.stdout)")
        }
        #expect(help.status == 0)
    }

    static func poll(_ seconds: Double = 10, _ read: () -> String) async -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var last = read()
        while Date() < deadline, last.isEmpty {
            try? await Task.sleep(for: .milliseconds(50))
            last = read()
        }
        return last
    }
}
