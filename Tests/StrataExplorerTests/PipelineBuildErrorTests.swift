import Foundation
@testable import StrataExplorer
import StrataTestSupport
import Testing

/// A level that parses but cannot be built (a disk directory that cannot be
/// made, a Redis URL the client refuses) is reported at the level's line in
/// its file, under the level's name, like a parse error.
@Suite struct PipelineBuildErrorTests {
    static let diskUnderAFile = """
    name: broken
    levels:
      - name: fast
        kind: memory
        capacity: 1KiB
      - name: slow
        kind: disk
        path: /dev/null/strata
        capacity: 1MiB
    """

    @Test func aLevelThatCannotBeBuiltNamesFileLineAndLevel() throws {
        let spec = try PipelineFile.parse(Self.diskUnderAFile, file: "broken.yaml")
        #expect(spec.file == "broken.yaml")
        let error = #expect(throws: PipelineBuildError.self) { try Pipeline(spec) }
        #expect(error?.file == "broken.yaml")
        #expect(error?.line == 6)
        #expect(error?.level == "slow")
        #expect(error?.description.hasPrefix("broken.yaml:6: level slow: ") == true, "\(String(describing: error))")
    }

    @Test func aSpecNotFromAFileHasNoLocation() {
        let spec = PipelineSpec(name: "code", levels: [LevelSpec(name: "d", kind: .disk(path: "/dev/null/x", capacity: 1024))])
        let error = #expect(throws: PipelineBuildError.self) { try Pipeline(spec) }
        #expect(error?.description.hasPrefix("level d: ") == true, "\(String(describing: error))")
    }

    /// `strata check` and `strata run` print the location once, on one line.
    @Test func theCommandsPrintItOnOneLine() async throws {
        let path = NSTemporaryDirectory() + "strata-build-\(UUID().uuidString.prefix(8)).yaml"
        try Self.diskUnderAFile.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        for arguments in [["check", path], ["run", "--config", path]] {
            let result = try await EndToEndTests.run(arguments, stdin: "")
            #expect(result.status != 0)
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(result.stderr)")
            #expect(lines.first?.hasPrefix("strata: error: \(path):6: level slow: ") == true, "\(result.stderr)")
        }
    }
}
