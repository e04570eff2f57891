import Foundation
@testable import StrataExplorer
import Testing

/// A text field given a list or a mapping is named by its field (the name
/// used to be built from the YAML node, `levels[0].sequence(…)`).
@Suite struct PipelineFieldNameTests {
    func error(_ text: String) -> PipelineFileError? { pipelineFileError(text, file: "field.yaml") }

    @Test(arguments: ["name", "path", "base-url", "url", "prefix", "condition"])
    func aListWhereTextBelongsNamesTheField(field: String) {
        let kind = switch field {
        case "path": "disk\n    capacity: 1KiB"
        case "base-url": "http"
        case "url": "redis"
        case "prefix": "redis\n    url: redis://h:1"
        default: "memory\n    capacity: 1KiB"
        }
        let error = error("levels:\n  - kind: \(kind)\n    \(field): [a, b]\n")
        #expect(error?.field == "levels[0].\(field)")
        #expect(error?.message == "expected a single value")
        #expect(error?.line != nil)
    }

    /// A key that is a list rather than a name was skipped without a word.
    @Test func aLevelKeyThatIsNotANameIsRefused() {
        let error = error("levels:\n  - kind: memory\n    capacity: 1KiB\n    ? [a, b]\n    : c\n")
        #expect(error?.line == 4)
        #expect(error?.field == "levels[0]")
        #expect(error?.message.hasPrefix("expected a field name") == true, "\(String(describing: error))")
    }
}
