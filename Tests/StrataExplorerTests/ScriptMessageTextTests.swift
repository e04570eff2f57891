import Foundation
import Testing

/// `strata run` names a bad line in one line of plain text on stderr: the
/// words it quotes from the script (a level or toggle name, a command) never
/// carry an escape sequence, a carriage return or a vertical tab to the terminal.
@Suite(.serialized) struct ScriptMessageTextTests {
    @Test func errorMessagesQuoteControlCharactersAsText() async throws {
        let config = try EndToEndTests.quickConfig()
        defer { try? FileManager.default.removeItem(atPath: config) }
        let script = "clear x\u{1B}[2Jy\ntoggle a\rb\nfrob\u{0B}nicate\nload zipf 10 \u{1B}]0;t\u{07}\n"
        let result = try await EndToEndTests.run(["run", "--config", config], stdin: script)
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: true)
        #expect(lines.count == 4, "stderr: \(result.stderr.debugDescription)")
        for (index, line) in lines.enumerated() {
            #expect(line.hasPrefix("strata: stdin:\(index + 1): "), "\(line.debugDescription)")
        }
        let controls = result.stderr.unicodeScalars.filter { $0.properties.generalCategory == .control && $0 != "\n" }
        #expect(controls.isEmpty, "stderr: \(result.stderr.debugDescription)")
        #expect(result.stderr.contains("no level named 'x·[2Jy'"), "stderr: \(result.stderr.debugDescription)")
    }
}
