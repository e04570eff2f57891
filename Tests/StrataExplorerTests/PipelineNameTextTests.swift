import Foundation
@testable import StrataExplorer
import Testing

/// Names in a pipeline file are printed by `check`, `run`'s table and the
/// screen, and a level's name is typed after `clear`: control characters (an
/// escape sequence, a newline) and, in a level name, spaces are refused with
/// the file, line and field, as they are in keys and conditions.
@Suite struct PipelineNameTextTests {
    func error(_ text: String) -> PipelineFileError? { pipelineFileError(text, file: "names.yaml") }

    @Test(arguments: ["\"L\\e[31mX\"", "\"two\\nlines\"", "\"my level\"", "\"\"", "\"tab\\there\""])
    func aLevelNameThatIsNotOnePrintableWordIsRefused(name: String) {
        let error = error("levels:\n  - kind: memory\n    capacity: 1KiB\n    name: \(name)\n  - kind: origin\n")
        #expect(error?.line == 4, "\(String(describing: error))")
        #expect(error?.field == "levels[0].name")
    }

    @Test func aPipelineNameWithControlCharactersIsRefused() {
        let error = error("name: \"p\\e]0;title\\a\"\nlevels:\n  - kind: memory\n    capacity: 1KiB\n")
        #expect(error?.line == 1, "\(String(describing: error))")
        #expect(error?.field == "name")
    }

    @Test func aConditionWithControlCharactersIsRefused() {
        let error = error("levels:\n  - kind: memory\n    capacity: 1KiB\n    condition: \"c\\e[1m\"\n")
        #expect(error?.line == 4, "\(String(describing: error))")
        #expect(error?.field == "levels[0].condition")
    }

    @Test func printableNamesStillParse() throws {
        let spec = try PipelineFile.parse("name: my pipeline · 1\nlevels:\n  - name: L1·漢字\n    kind: memory\n    capacity: 1KiB\n", file: "ok.yaml")
        #expect(spec.name == "my pipeline · 1")
        #expect(spec.levels[0].name == "L1·漢字")
    }
}
