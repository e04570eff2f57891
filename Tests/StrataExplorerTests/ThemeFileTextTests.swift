import Foundation
@testable import StrataExplorer
import Testing

/// A theme file that is there but is not UTF-8 text says so (as a pipeline
/// file does), rather than that it cannot be read.
@Suite struct ThemeFileTextTests {
    @Test func aThemeFileThatIsNotUTF8SaysSo() throws {
        let path = NSTemporaryDirectory() + "strata-latin1-\(UUID().uuidString.prefix(6)).theme"
        // Latin-1 "rouge é": the byte 0xE9 alone is not UTF-8.
        try (Data("theme[hit]=\"#ff0000\" # rouge ".utf8) + [0xE9, 0x0A]).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = #expect(throws: ThemeError.self) { try Theme.load(path, directories: []) }
        #expect(error?.message == "the file is not UTF-8 text", "\(String(describing: error))")
        let missing = #expect(throws: ThemeError.self) { try Theme.load(path + ".absent.theme", directories: []) }
        #expect(missing?.message == "cannot read the theme file")
    }
}
