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

/// `strata run --script FILE` reads only a regular file of bounded size: a
/// device is refused by name, not read, and a huge file by its size, before
/// anything is read or run.
@Suite(.serialized) struct ScriptFileBoundsTests {
    @Test func aDeviceIsRefusedAsAScript() async throws {
        let config = try EndToEndTests.quickConfig()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = try await EndToEndTests.run(["run", "--config", config, "--script", "/dev/zero"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("/dev/zero: not a regular file (it is a character device)"), "stderr: \(result.stderr)")
    }

    @Test func aScriptOverTheLimitIsRefusedBeforeAnythingRuns() async throws {
        let config = try EndToEndTests.quickConfig()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let script = NSTemporaryDirectory() + "strata-huge-\(UUID().uuidString.prefix(6)).script"
        #expect(FileManager.default.createFile(atPath: script, contents: Data("set k v\n".utf8)))
        defer { try? FileManager.default.removeItem(atPath: script) }
        // Sparse: 64 MiB + 1 byte on paper, nothing on disk.
        #expect(truncate(script, off_t(64 << 20) + 1) == 0)
        let result = try await EndToEndTests.run(["run", "--config", config, "--script", script])
        #expect(result.status != 0)
        #expect(result.stderr.contains("\(script): the file is larger than 64 MiB"), "stderr: \(result.stderr)")
        #expect(!result.stdout.contains("set k"), "nothing ran: \(result.stdout)")
    }
}
