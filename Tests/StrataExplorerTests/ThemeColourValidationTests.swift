import Foundation
@testable import StrataExplorer
import Testing

/// A colour is exactly `#rrggbb`, `#gg`, three decimals from 0 to 255, or
/// empty: anything else is refused at its line, never read as some colour.
@Suite struct ThemeColourValidationTests {
    @Test(arguments: [
        "1 x 2 3", "300 1 2 3", "1 2", "1 2 3 4", "256 0 0", "-1 2 3", "+1 2 3", "1 2 3x",
        "#+12345", "#-12345", "#+1", "#-0", "#12345g", "#12 345", "#1234567", "#", "#0x1234",
    ])
    func badColoursAreRefusedWithTheirLine(value: String) {
        let text = "# mine\ntheme[main_bg]=\"\"\ntheme[hit]=\"\(value)\"\n"
        #expect(throws: ThemeError(file: "mine.theme", line: 3,
                                   message: "hit: bad colour \"\(value)\" (use #rrggbb, #gg, \"R G B\" or \"\")")) {
            try Theme.parse(text, name: "mine", file: "mine.theme")
        }
    }

    @Test(arguments: [
        ("#0a0B0c", ThemeColor.rgb(10, 11, 12)), ("#ff", .rgb(255, 255, 255)), ("0 128 255", .rgb(0, 128, 255)),
        ("0  128   255", .rgb(0, 128, 255)), ("", .terminalDefault), ("default", .terminalDefault),
    ])
    func goodColoursStillParse(value: String, colour: ThemeColor) throws {
        let theme = try Theme.parse("theme[hit]=\"\(value)\"\n", name: "ok", file: "ok.theme")
        #expect(theme.colors["hit"] == colour)
    }
}
