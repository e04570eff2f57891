import Foundation
@testable import StrataExplorer
import Testing

/// A duplicated YAML key, which Yams reports apart from its other errors, is
/// reported at its line like any other YAML error.
@Suite struct PipelineDuplicateKeyTests {
    func error(_ text: String) -> PipelineFileError? { pipelineFileError(text, file: "dup.yaml") }

    @Test func aDuplicatedKeyNamesItsLine() {
        let error = error("levels:\n  - kind: memory\n    capacity: 1KiB\n    capacity: 2KiB\n")
        #expect(error?.line == 3)
        #expect(error?.message == "not valid YAML: the key \"capacity\" appears more than once in this mapping")
    }

    @Test func aDuplicatedTopLevelKeyNamesItsLine() {
        let error = error("name: a\nlevels:\n  - kind: memory\n    capacity: 1KiB\nname: b\n")
        #expect(error?.line == 1)
        #expect(error?.message.contains("\"name\"") == true, "\(String(describing: error))")
    }
}
