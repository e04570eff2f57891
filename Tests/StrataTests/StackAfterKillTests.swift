import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A process killed with `kill -9` never tells its disk level that nothing
/// keeps it coherent any more (no deinit runs). Before the fix, a stack built
/// over that directory by the next process served the value the lower level
/// had replaced while nobody listened.
@Suite struct StackAfterKillTests {
    @Test func aStackOverADiskLevelLeftByAKilledProcessServesNothingStale() async throws {
        let upperDir = TemporaryDirectory(), lowerDir = TemporaryDirectory()
        defer { upperDir.remove(); lowerDir.remove() }
        let process = Process()
        let output = Pipe()
        process.executableURL = productsDirectory.appendingPathComponent("StrataDiskWorker")
        process.arguments = [upperDir.path, "stacked", lowerDir.path, "k", "before"]
        process.standardOutput = output
        try process.run()
        let line = try output.fileHandleForReading.readLine(timeout: .seconds(30))
        #expect(line == "ready")
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()

        // Changed below while nobody listened.
        let lowerNow = try DiskCacheLevel<String, Data>(name: "lower", directory: lowerDir.url, capacity: 400_000)
        try await lowerNow.set(Data("after".utf8), forKey: "k")

        let upper = try DiskCacheLevel<String, Data>(name: "upper", directory: upperDir.url, capacity: 400_000)
        let lower = try DiskCacheLevel<String, Data>(name: "lower", directory: lowerDir.url, capacity: 400_000)
        let stack = upper + lower
        let answer = try await stack.getIfPresent("k").map { String(decoding: $0, as: UTF8.self) }
        #expect(answer == "after", "the killed process's value came back from the upper disk level")
        await stack.waitForPendingWrites()
        #expect(try await stack.getIfPresent("k").map { String(decoding: $0, as: UTF8.self) } == "after")
    }

    /// A stack over a lower level that reports nothing (an origin) keeps
    /// what its upper level held from an earlier run.
    @Test func aStackOverAnOriginKeepsWhatTheDiskHeld() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        do {
            let disk = try DiskCacheLevel<String, String>(name: "d", directory: dir.url, capacity: 1 << 20)
            try await disk.set("kept", forKey: "k")
        }
        let disk = try DiskCacheLevel<String, String>(name: "d", directory: dir.url, capacity: 1 << 20)
        let stack = disk + MemoryCacheLevel<String, String>(capacity: 100)  // reports nothing, as an origin
        #expect(try await stack.getIfPresent("k") == "kept")
    }
}

private extension FileHandle {
    /// One line of output, or `nil` if none came within `timeout`.
    func readLine(timeout: Duration) throws -> String? {
        let deadline = ContinuousClock.now + timeout
        var bytes = Data()
        var poller = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
        while ContinuousClock.now < deadline {
            guard poll(&poller, 1, 100) > 0 else { continue }
            let chunk = availableData
            if chunk.isEmpty { return nil }
            bytes.append(chunk)
            if let newline = bytes.firstIndex(of: 10) { return String(decoding: bytes[..<newline], as: UTF8.self) }
        }
        return nil
    }
}
