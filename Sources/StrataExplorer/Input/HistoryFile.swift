import Foundation
import Strata

/// The `:` line's history kept across runs: one command a line, the newest
/// last, in the XDG state directory (``ExplorerPaths/historyFile``). A file
/// that cannot be read is an empty history; one that cannot be written is
/// left as it was (history is a convenience, never a reason to fail).
public struct HistoryFile: Sendable {
    public let path: String

    public init(path: String) { self.path = path }

    /// The largest history file read (100 commands take a few KiB).
    public static let maxBytes = 1 << 20

    /// The commands saved, oldest first, at most ``InputController/historyLimit``.
    public func load() -> [String] {
        // Only a regular file of bounded size (``SmallFile``): a FIFO is not
        // waited on, nor /dev/zero read for ever.
        guard let bytes = try? SmallFile.contents(of: path, limit: Self.maxBytes),
              let text = String(bytes: bytes, encoding: .utf8) else { return [] }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        return Array(lines.suffix(InputController.historyLimit))
    }

    /// Replaces the file with `history` (the directory is created, private):
    /// the newest commands whose lines fit in ``maxBytes`` together, so what
    /// is saved always loads back (a file too large to load would be an
    /// empty history, and the next save would lose it all). A command longer
    /// than that on its own is not saved.
    public func save(_ history: [String]) {
        let directory = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        let text = Self.lines(keeping: history).map { $0 + "\n" }.joined()
        guard FileManager.default.createFile(atPath: path + ".tmp", contents: Data(text.utf8),
                                             attributes: [.posixPermissions: 0o600]) else { return }
        _ = rename(path + ".tmp", path)
    }

    /// The commands ``save(_:)`` writes, oldest first.
    static func lines(keeping history: [String]) -> [String] {
        var kept: [String] = [], bytes = 0
        for command in history.reversed() where kept.count < InputController.historyLimit {
            // A command line with a newline would read back as two commands.
            guard !command.contains("\n") && !command.contains("\r") else { continue }
            let size = command.utf8.count + 1
            if size > maxBytes { continue }
            if bytes + size > maxBytes { break }
            kept.append(command)
            bytes += size
        }
        return kept.reversed()
    }
}
