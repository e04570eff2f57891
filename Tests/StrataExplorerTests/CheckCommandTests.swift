import Foundation
import Testing

/// `strata check` finds what building the pipeline would refuse without
/// doing any of it, and refuses a pipeline whose levels below an origin would
/// never be asked.
@Suite struct CheckCommandTests {
    static func write(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "strata-check-\(UUID().uuidString.prefix(8)).yaml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func checkCreatesNothing() async throws {
        let root = NSTemporaryDirectory() + "strata-check-dir-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let config = try Self.write("""
        levels:
          - name: L1
            kind: memory
            capacity: 1MiB
          - name: L2
            kind: disk
            path: \(root)/cache
            capacity: 1MiB
          - name: origin
            kind: origin
        """)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = try await EndToEndTests.run(["check", config])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("ok: the pipeline builds"))
        #expect(!FileManager.default.fileExists(atPath: root), "check created \(root)")
    }

    @Test func checkNamesADirectoryThatCannotBeMade() async throws {
        let file = NSTemporaryDirectory() + "strata-check-file-\(UUID().uuidString.prefix(8))"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let config = try Self.write("""
        levels:
          - name: L2
            kind: disk
            path: \(file)/cache
            capacity: 1MiB
        """)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = try await EndToEndTests.run(["check", config])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(config):2: level L2: cache directory \(file)/cache is not writable"), "\(result.stderr)")
    }

    @Test func anOriginAboveOtherLevelsIsRefused() async throws {
        let config = try Self.write("""
        levels:
          - name: L1
            kind: memory
            capacity: 1MiB
          - name: origin
            kind: origin
          - name: L2
            kind: memory
            capacity: 1MiB
        """)
        defer { try? FileManager.default.removeItem(atPath: config) }
        let result = try await EndToEndTests.run(["check", config])
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(config):5: levels[1].kind: an origin has every key, so the 1 level(s) below it would never be asked: put it last"),
                "\(result.stderr)")
    }
}
