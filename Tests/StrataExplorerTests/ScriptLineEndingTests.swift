import Foundation
import Testing

/// `strata run --script FILE` with Windows line endings: each line is still
/// one command (as on stdin), and no `\r` ends up in a key or a stored value.
@Suite(.serialized) struct ScriptLineEndingTests {
    @Test func aCRLFScriptRunsOneCommandPerLine() async throws {
        let config = try EndToEndTests.quickConfig()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let script = NSTemporaryDirectory() + "strata-crlf-\(UUID().uuidString.prefix(6)).script"
        try "# written on Windows\r\nset k v\r\nget k\r\n".write(toFile: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        let result = try await EndToEndTests.run(["run", "--config", config, "--script", script])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        // On main the whole file was one `set` whose value held the other lines (10 bytes).
        #expect(result.stdout.contains("set k: 1 bytes written"), "stdout: \(result.stdout)")
        #expect(result.stdout.contains("get k: 1 bytes from L1"), "stdout: \(result.stdout)")
        #expect(!result.stdout.contains("\r"))
    }

    @Test func aCRLFScriptNamesTheLineOfABadCommand() async throws {
        let config = try EndToEndTests.quickConfig()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let script = NSTemporaryDirectory() + "strata-crlf-\(UUID().uuidString.prefix(6)).script"
        try "get a\r\nbogus\r\nget b\r\n".write(toFile: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        let result = try await EndToEndTests.run(["run", "--config", config, "--script", script])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(script):2: unknown command 'bogus'"), "stderr: \(result.stderr)")
        #expect(result.stdout.contains("get b: 512 bytes from origin"), "stdout: \(result.stdout)")
    }
}
