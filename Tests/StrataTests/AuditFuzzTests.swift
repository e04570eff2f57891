import Foundation
@testable import Strata
import StrataTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Rule 2 audit: bytes from outside the process (entry files, domain files,
/// /proc and cgroup files, image data) never crash, hang or corrupt; bad input
/// is a typed error or a miss. Each test here failed when it was written.
@Suite struct AuditFuzzTests {
    // MARK: Memory-pressure monitor

    /// `/proc/meminfo` (or a test's reader) with a value above Int.max / 1024
    /// kB: `value * 1024` traps.
    @Test func meminfoValueTooLargeForBytesDoesNotTrap() async {
        await #expect(processExitsWith: .success) {
            let parsed = MemoryReading.parseMeminfo("MemTotal:       9223372036854775807 kB\nMemAvailable:   1 kB\n")
            _ = parsed
        }
    }

    /// A cgroup `memory.current` that is negative (or a limit/current pair whose
    /// difference overflows): `limit - current` traps in `shouldWarn`.
    @Test func hostileCgroupNumbersDoNotTrap() async {
        await #expect(processExitsWith: .success) {
            let monitor = LinuxMemoryPressureMonitor(source: MemoryPressure(), reader: {
                MemoryReading(cgroupCurrent: Int.min, cgroupLimit: Int.max)
            })
            _ = await monitor.poll()
        }
    }

    // MARK: Disk level

    /// A FIFO where an entry file is expected: `open(O_RDONLY)` blocks forever,
    /// so the read never returns (the alarm kills the process after 2 s).
    @Test func fifoAtAnEntryPathIsAMissNotAHang() async {
        await #expect(processExitsWith: .success) {
            let dir = TemporaryDirectory(); defer { dir.remove() }
            let disk = try DiskCacheLevel<String, Data>(directory: dir.url, capacity: 100_000)
            try await disk.set(Data("v".utf8), forKey: "k")
            let file = dir.path + "/" + dir.entryFiles()[0]
            unlink(file)
            guard mkfifo(file, 0o600) == 0 else { return }
            alarm(2)
            _ = try? await disk.getIfPresent("k")
        }
    }

    /// A FIFO named like an entry in the directory at start-up: the index
    /// rebuild opens it and blocks forever, so the level never initialises.
    @Test func fifoInTheDirectoryDoesNotHangStartUp() async {
        await #expect(processExitsWith: .success) {
            let dir = TemporaryDirectory(); defer { dir.remove() }
            try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
            guard mkfifo(dir.path + "/0123456789abcdef0123456789abcdef.entry", 0o600) == 0 else { return }
            alarm(2)
            _ = try? DiskCacheLevel<String, Data>(directory: dir.url, capacity: 100_000)
        }
    }

    // MARK: Key-value store level

    /// A FIFO where the domain file is expected: every operation blocks in
    /// `open` instead of throwing `readFailed` as the docs promise.
    @Test func fifoAsTheDomainFileThrowsInsteadOfHanging() async {
        await #expect(processExitsWith: .success) {
            let dir = TemporaryDirectory(); defer { dir.remove() }
            let level = try KeyValueStoreLevel<String, String>(name: "d", directory: dir.url)
            guard mkfifo(level.file.path, 0o600) == 0 else { return }
            alarm(2)
            _ = try? await level.getIfPresent("k")
        }
    }

    // MARK: Image transformer

    /// A valid baseline JPEG whose APP segments (EXIF, ICC profile) exceed
    /// 64 KiB before the SOF marker: the parser only looks at the first
    /// 64 KiB and throws `truncated(.jpeg)` for a complete, valid image.
    @Test func jpegWithLargeMetadataIsNotTruncated() throws {
        var bytes: [UInt8] = [0xFF, 0xD8]
        for _ in 0..<2 {  // two APP1 segments of 65,535 bytes each
            bytes += [0xFF, 0xE1, 0xFF, 0xFF] + [UInt8](repeating: 0x41, count: 0xFFFF - 2)
        }
        // SOF0: length 17, precision 8, height 480, width 640, 3 components.
        bytes += [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01, 0xE0, 0x02, 0x80, 0x03,
                  0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]
        bytes += [0xFF, 0xD9]
        let image = try ImageTransformer.parse(Data(bytes))
        #expect(image.format == .jpeg && image.width == 640 && image.height == 480)
    }

    /// A PNG whose IHDR says 0×0 or a width above 2^31-1 (both invalid per the
    /// PNG spec) is accepted as an image, so the image preset caches it.
    @Test func pngWithImpossibleDimensionsIsRejected() {
        func png(width: UInt32, height: UInt32) -> Data {
            var b: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13]
            b += Array("IHDR".utf8)
            for v in [width, height] { b += [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
            b += [8, 6, 0, 0, 0, 0, 0, 0, 0]
            return Data(b)
        }
        #expect(throws: ImageTransformerError.self) { try ImageTransformer.parse(png(width: 0, height: 0)) }
        #expect(throws: ImageTransformerError.self) { try ImageTransformer.parse(png(width: 0xFFFF_FFFF, height: 0xFFFF_FFFF)) }
    }
}
