import Foundation
import Testing

/// Compares `text` with `Snapshots/<name>.txt`. Set STRATA_RECORD_SNAPSHOTS=1
/// to (re)write the file instead; a missing file is written and the test fails,
/// so a new snapshot is always looked at once.
func assertSnapshot(_ text: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) {
    let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")
    let file = directory.appendingPathComponent(name + ".txt")
    let record = ProcessInfo.processInfo.environment["STRATA_RECORD_SNAPSHOTS"] == "1"
    guard !record, let data = FileManager.default.contents(atPath: file.path) else {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: file.path, contents: Data((text + "\n").utf8))
        if !record { Issue.record("snapshot \(name) was missing and has been written; check it", sourceLocation: sourceLocation) }
        return
    }
    let expected = String(decoding: data, as: UTF8.self)
    if expected != text + "\n" {
        Issue.record("frame differs from Snapshots/\(name).txt:\n--- expected\n\(expected)--- got\n\(text)", sourceLocation: sourceLocation)
    }
}
