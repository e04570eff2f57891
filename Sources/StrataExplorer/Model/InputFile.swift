import Foundation
import Strata

/// The text files the explorer reads whole when a person names them: pipeline
/// files (`--config`, `strata check`) and themes (`--theme`, `:theme`). Only
/// a regular file of at most ``maxBytes`` is read: a FIFO is refused rather
/// than waited on, `/dev/zero` rather than read for ever, and a huge file
/// rather than held in memory (see ``SmallFile``).
enum InputFile {
    /// The most a pipeline file or a theme may hold: 1 MiB, thousands of
    /// times a real one.
    static let maxBytes = 1 << 20

    /// Why a file gave no text.
    enum Problem: Error, Equatable {
        /// Missing, or not readable by this user.
        case unreadable
        /// `kind` says what it is instead ("a FIFO", "a directory", …).
        case notRegularFile(kind: String)
        case tooLarge(limit: Int)
        case notUTF8

        /// The reason, for a one-line error after the file's name.
        /// `unreadable` is the text for a file that cannot be read; `kind`
        /// names the file's role ("pipeline file") in the size limit.
        func message(unreadable: String, kind role: String) -> String {
            switch self {
            case .unreadable: unreadable
            case .notRegularFile(let kind): "not a regular file (it is \(kind))"
            case .tooLarge(let limit): "the file is larger than \(Units.exactBytes(limit)), the limit for a \(role)"
            case .notUTF8: "the file is not UTF-8 text"
            }
        }
    }

    /// The text of the file at `path`, at most `limit` bytes of UTF-8.
    static func text(_ path: String, limit: Int = maxBytes) throws(Problem) -> String {
        let bytes: [UInt8]
        do {
            bytes = try SmallFile.contents(of: path, limit: limit)
        } catch {
            switch error {
            case .notRegularFile(let kind): throw .notRegularFile(kind: kind)
            case .tooLarge(let limit): throw .tooLarge(limit: limit)
            case .cannotOpen, .readFailed: throw .unreadable
            }
        }
        guard let text = String(data: Data(bytes), encoding: .utf8) else { throw .notUTF8 }
        return text
    }
}
