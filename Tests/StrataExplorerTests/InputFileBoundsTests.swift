import Foundation
import Strata
@testable import StrataExplorer
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Pipeline files (`--config`, `strata check`) and themes (`--theme`,
/// `:theme`) are read whole. Anything but a regular file, or a file over
/// ``InputFile/maxBytes``, is refused with one line naming the file and why.
///
/// They were read with `FileManager.contents(atPath:)`, which has no size
/// limit: a 3 GiB file was read into memory (1.6 GB resident after 5 s), a
/// 1 MiB + 1 byte one loaded. On this Linux toolchain that Foundation opens
/// with `O_NONBLOCK` and returns nil for a FIFO or a device, so `/dev/zero`
/// and a FIFO did not hang here, but said only "cannot read the file"; a
/// Foundation that opens a FIFO blocking, or reads a device to its end, would
/// hang on them. The tests that could hang or take the memory run in a child
/// process with `alarm` as the deadline and a cap on its data.
@Suite struct InputFileBoundsTests {
    /// The limit for both kinds of file.
    static let limit = 1 << 20

    // MARK: Not regular files

    // (Two children rather than one per case: each exit test starts the
    // whole test binary again, and the CPU that costs slows the suites
    // running beside it.)

    /// `--config /dev/zero`, a FIFO, and a sparse file of 3 GiB (no disk
    /// used; read whole, it took the memory).
    @Test func pipelineFilesThatAreDevZeroAFIFOOrHugeAreRefusedAtOnce() async {
        await #expect(processExitsWith: .success) {
            InputFileBoundsTests.boundTheChild()
            let zero = InputFileBoundsTests.pipelineError("/dev/zero")
            precondition(zero == "/dev/zero: not a regular file (it is a character device)", "\(zero ?? "loaded")")

            let fifo = InputFileBoundsTests.makeFIFO(named: "pipeline.yaml")
            defer { InputFileBoundsTests.removeDirectory(of: fifo) }
            let fromFIFO = InputFileBoundsTests.pipelineError(fifo)
            precondition(fromFIFO == "\(fifo): not a regular file (it is a FIFO)", "\(fromFIFO ?? "loaded")")

            let sparse = (fifo as NSString).deletingLastPathComponent + "/sparse.yaml"
            let fd = open(sparse, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            precondition(fd >= 0 && ftruncate(fd, 3 << 30) == 0 && close(fd) == 0)
            let huge = InputFileBoundsTests.pipelineError(sparse)
            precondition(huge == "\(sparse): the file is larger than 1 MiB, the limit for a pipeline file", "\(huge ?? "loaded")")
        }
    }

    /// `--theme /dev/zero`, and a FIFO named as a path (`:theme
    /// some/file.theme`) and by name (`:theme mine`, a user theme found in
    /// the themes directory).
    @Test func themesThatAreDevZeroOrAFIFOAreRefusedAtOnce() async {
        await #expect(processExitsWith: .success) {
            InputFileBoundsTests.boundTheChild()
            let zero = InputFileBoundsTests.themeError("/dev/zero", directories: [])
            precondition(zero == "/dev/zero: not a regular file (it is a character device)", "\(zero ?? "loaded")")

            let fifo = InputFileBoundsTests.makeFIFO(named: "mine.theme")
            defer { InputFileBoundsTests.removeDirectory(of: fifo) }
            let byPath = InputFileBoundsTests.themeError(fifo, directories: [])
            precondition(byPath == "\(fifo): not a regular file (it is a FIFO)", "\(byPath ?? "loaded")")
            let directory = (fifo as NSString).deletingLastPathComponent
            let byName = InputFileBoundsTests.themeError("mine", directories: [directory])
            precondition(byName == "\(fifo): not a regular file (it is a FIFO)", "\(byName ?? "loaded")")
        }
    }

    @Test func aDirectoryIsRefusedAsSuch() throws {
        let directory = NSTemporaryDirectory() + "strata-dir-\(UUID().uuidString.prefix(6)).theme"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(Self.themeError(directory, directories: []) == "\(directory): not a regular file (it is a directory)")
        #expect(Self.pipelineError(directory) == "\(directory): not a regular file (it is a directory)")
    }

    // MARK: Size

    @Test func aPipelineFileOverTheLimitIsRefused() throws {
        let path = try Self.write(Self.padded("levels:\n  - kind: memory\n    capacity: 1KiB\n", to: Self.limit + 1),
                                  name: "big.yaml")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(Self.pipelineError(path) == "\(path): the file is larger than 1 MiB, the limit for a pipeline file")
    }

    @Test func aThemeFileOverTheLimitIsRefused() throws {
        let path = try Self.write(Self.padded("theme[hit]=\"#010203\"\n", to: Self.limit + 1), name: "big.theme")
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(Self.themeError(path, directories: []) == "\(path): the file is larger than 1 MiB, the limit for a theme file")
    }

    @Test func theLimitIsOneMiB() {
        #expect(InputFile.maxBytes == Self.limit)
    }

    /// A file longer than its `fstat` size says (a `/proc` file says 0, a
    /// growing file says less) is refused once reading passes the limit, not
    /// read on.
    @Test func aFileLongerThanItsStatusSaysStopsAtTheLimit() throws {
        #expect(throws: SmallFileError.tooLarge(limit: 16)) { try SmallFile.contents(of: "/proc/self/status", limit: 16) }
        let whole = try SmallFile.contents(of: "/proc/self/status", limit: Self.limit)
        #expect(String(decoding: whole, as: UTF8.self).hasPrefix("Name:"))
    }

    @Test func filesOfExactlyTheLimitStillLoad() throws {
        let pipeline = try Self.write(Self.padded("levels:\n  - kind: memory\n    capacity: 1KiB\n", to: Self.limit),
                                      name: "edge.yaml")
        defer { try? FileManager.default.removeItem(atPath: pipeline) }
        #expect(try PipelineFile.load(path: pipeline).levels.count == 1)
        let theme = try Self.write(Self.padded("theme[hit]=\"#010203\"\n", to: Self.limit), name: "edge.theme")
        defer { try? FileManager.default.removeItem(atPath: theme) }
        #expect(try Theme.load(theme, directories: []).colors["hit"] == .rgb(1, 2, 3))
    }

    // MARK: Ordinary files

    @Test func ordinaryFilesStillLoad() throws {
        let pipeline = try Self.write(Data("name: small\nlevels:\n  - kind: memory\n    capacity: 1KiB\n".utf8), name: "small.yaml")
        defer { try? FileManager.default.removeItem(atPath: pipeline) }
        let spec = try PipelineFile.load(path: pipeline)
        #expect(spec.name == "small" && spec.levels.count == 1)
        let theme = try Self.write(Data("theme[hit]=\"#0a0b0c\"\n".utf8), name: "small.theme")
        defer { try? FileManager.default.removeItem(atPath: theme) }
        #expect(try Theme.load(theme, directories: []).colors["hit"] == .rgb(10, 11, 12))
        let name = (theme as NSString).lastPathComponent.replacingOccurrences(of: ".theme", with: "")
        let byName = try Theme.load(name, directories: [(theme as NSString).deletingLastPathComponent])
        #expect(byName.colors["hit"] == .rgb(10, 11, 12))
    }

    @Test func aMissingFileKeepsItsMessage() {
        let path = NSTemporaryDirectory() + "strata-absent-\(UUID().uuidString.prefix(6))"
        #expect(Self.pipelineError(path + ".yaml") == "\(path).yaml: cannot read the file")
        #expect(Self.themeError(path + ".theme", directories: []) == "\(path).theme: cannot read the theme file")
    }

    // MARK: Helpers

    /// In a child process: a deadline (SIGALRM ends the process) and a cap on
    /// its data, so a read that never ends fails instead of hanging.
    static func boundTheChild() {
        alarm(10)
        var limit = rlimit(rlim_cur: 2 << 30, rlim_max: 2 << 30)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_DATA.rawValue), &limit)
    }

    /// A FIFO with no writer, in a fresh directory.
    static func makeFIFO(named name: String) -> String {
        let directory = NSTemporaryDirectory() + "strata-fifo-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + name
        precondition(mkfifo(path, 0o600) == 0, "mkfifo \(path): \(String(cString: strerror(errno)))")
        return path
    }

    static func removeDirectory(of path: String) {
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }

    /// The one line `PipelineFile.load` gives for `path`, or nil if it loads.
    static func pipelineError(_ path: String) -> String? {
        do {
            _ = try PipelineFile.load(path: path)
            return nil
        } catch {
            return "\(error)"
        }
    }

    static func themeError(_ nameOrPath: String, directories: [String]) -> String? {
        do {
            _ = try Theme.load(nameOrPath, directories: directories)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// `text` then a comment line filling the file to exactly `size` bytes.
    static func padded(_ text: String, to size: Int) -> Data {
        var data = Data(text.utf8)
        data.append(contentsOf: Array("#".utf8))
        data.append(Data(repeating: UInt8(ascii: "x"), count: size - data.count - 1))
        data.append(UInt8(ascii: "\n"))
        precondition(data.count == size)
        return data
    }

    static func write(_ data: Data, name: String) throws -> String {
        let path = NSTemporaryDirectory() + "strata-\(UUID().uuidString.prefix(8))-\(name)"
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }
}
