import Foundation
import Strata
import StrataTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct KeyValueStoreLevelTests {
    @Test func persistsRemovesFromItsOwnDomainAndSurvivesRestart() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let settings = try KeyValueStoreLevel<String, String>(name: "settings", directory: dir.url)
        let other = try KeyValueStoreLevel<String, String>(name: "other", directory: dir.url)
        try await settings.set("dark", forKey: "theme")
        try await other.set("keep me", forKey: "theme")
        try await settings.remove("theme")
        #expect(try await settings.getIfPresent("theme") == nil)
        #expect(try await other.get("theme") == "keep me", "another domain's same key is untouched")
        try await settings.set("light", forKey: "theme")
        let reopened = try KeyValueStoreLevel<String, String>(name: "settings", directory: dir.url)
        #expect(try await reopened.get("theme") == "light")
        #expect(Set(dir.files()) == ["settings.plist", "other.plist"])
    }

    @Test func memoryWarningDropsOnlyTheSoftCopy() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try KeyValueStoreLevel<String, Data>(name: "d", directory: dir.url)
        try await level.set(Data([1, 2, 3]), forKey: "k")
        #expect(level.isLoaded)
        await level.onMemoryWarning()
        #expect(!level.isLoaded)
        #expect(try await level.get("k") == Data([1, 2, 3]))
        #expect(level.isLoaded)
    }

    @Test func corruptFileIsMovedAsideNotOverwritten() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let garbage = Data("definitely not a property list".utf8)
        _ = FileManager.default.createFile(atPath: dir.path + "/prefs.plist", contents: garbage)
        let level = try KeyValueStoreLevel<String, String>(name: "prefs", directory: dir.url)
        #expect(try await level.getIfPresent("k") == nil)
        try await level.set("v", forKey: "k")
        let aside = dir.files().first { $0.hasPrefix("prefs.plist.corrupt-") }
        #expect(aside != nil)
        #expect(FileManager.default.contents(atPath: dir.path + "/" + aside!) == garbage)
        #expect(try await level.get("k") == "v")
    }

    @Test func expiryAndCodableValues() async throws {
        struct Token: Codable, Equatable, Sendable { var value: String }
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock()
        let tokens = try KeyValueStoreLevel<String, Token>(name: "tokens", directory: dir.url, clock: clock)
        try await tokens.set(Token(value: "abc"), forKey: "alice", ttl: .seconds(10))
        try await tokens.set(Token(value: "def"), forKey: "bob")
        #expect(try await tokens.get("alice") == Token(value: "abc"))
        clock.advance(by: .seconds(10))
        #expect(try await tokens.getIfPresent("alice") == nil)
        #expect(await tokens.removeExpired() == 0)
        #expect(tokens.count == 1)
        await tokens.clear()
        #expect(tokens.count == 0)
    }

    @Test func binaryAndPathLikeKeys() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let level = try KeyValueStoreLevel<Data, String>(name: "../escape", directory: dir.url)
        try await level.set("x", forKey: Data([0, 0xFF, 0x2F]))
        #expect(try await level.get(Data([0, 0xFF, 0x2F])) == "x")
        #expect(dir.files() == [".._escape.plist"])
    }
}

/// A key-value store never loses its domain file to a failed read, keeps
/// every corrupt file it moves aside, and keeps its files private.
@Suite struct KeyValueStoreLevelSafetyTests {
    func mode(_ path: String) -> mode_t {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return info.st_mode & 0o777
    }

    @Test func failedReadThrowsAndNeverOverwritesTheDomainFile() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let file = dir.path + "/settings.plist"
        do {
            let writer = try KeyValueStoreLevel<String, String>(name: "settings", directory: dir.url)
            try await writer.set("dark", forKey: "theme")
            try await writer.set("en", forKey: "language")
        }
        let original = try #require(FileManager.default.contents(atPath: file))
        let level = try KeyValueStoreLevel<String, String>(name: "settings", directory: dir.url)
        // A read that really fails, even as root: the path is briefly a directory (EISDIR).
        try FileManager.default.moveItem(atPath: file, toPath: file + ".saved")
        try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)

        await #expect(throws: DiskCacheError.readFailed(path: file, errno: EISDIR)) {
            try await level.getIfPresent("theme")
        }
        await #expect(throws: DiskCacheError.readFailed(path: file, errno: EISDIR)) {
            try await level.set("light", forKey: "theme")
        }
        #expect(!level.isLoaded, "a failed read is not cached as an empty domain")

        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.moveItem(atPath: file + ".saved", toPath: file)
        #expect(FileManager.default.contents(atPath: file) == original)
        try await level.set("fr", forKey: "language")  // the next operation reads again
        #expect(try await level.get("theme") == "dark")
        let reopened = try KeyValueStoreLevel<String, String>(name: "settings", directory: dir.url)
        #expect(try await reopened.get("theme") == "dark")
        #expect(try await reopened.get("language") == "fr")
    }

    @Test func corruptFilesInTheSameSecondGetAsideFilesOfTheirOwn() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let clock = TestClock()  // never moves: both happen in the same second
        let level = try KeyValueStoreLevel<String, String>(name: "prefs", directory: dir.url, clock: clock)
        let first = Data("first garbage".utf8), second = Data("second garbage".utf8)
        _ = FileManager.default.createFile(atPath: dir.path + "/prefs.plist", contents: first)
        #expect(try await level.getIfPresent("k") == nil)
        await level.onMemoryWarning()
        _ = FileManager.default.createFile(atPath: dir.path + "/prefs.plist", contents: second)
        #expect(try await level.getIfPresent("k") == nil)
        let asides = dir.files().filter { $0.hasPrefix("prefs.plist.corrupt-") }
        #expect(asides.count == 2)
        let kept = Set(asides.compactMap { FileManager.default.contents(atPath: dir.path + "/" + $0) })
        #expect(kept == [first, second])
    }

    @Test func filesAndDirectoriesItCreatesArePrivate() async throws {
        let dir = TemporaryDirectory(); defer { dir.remove() }
        let store = dir.url.appendingPathComponent("kv")
        let level = try KeyValueStoreLevel<String, String>(name: "tokens", directory: store)
        try await level.set("secret", forKey: "alice")
        #expect(mode(store.path) == 0o700)
        #expect(mode(store.path + "/tokens.plist") == 0o600)
    }
}
