import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The descriptor of a connected channel's socket, which NIO does not
/// expose: found among the process's descriptors by its local and remote
/// address.
///
/// - NIO creates its sockets without `SOCK_CLOEXEC` on Linux, so every
///   process the application starts (a shell command, a tmux server) would
///   inherit the Redis connections and keep them open after the client
///   closes them. The socket found is marked close-on-exec. A child forked in
///   the instant between connect and this call can still inherit it.
/// - ``duplicateDescriptor(of:)`` returns a duplicate (close-on-exec) that
///   the caller owns: ``RedisRequestQueue`` writes through it. It is checked
///   to still name the channel's socket after duplicating, so a descriptor
///   number closed and reused in between is never kept.
enum ChannelSocket {
    /// A duplicate of `channel`'s socket descriptor, owned by the caller (who
    /// closes it); `nil` if it cannot be found. Marks the socket close-on-exec.
    static func duplicateDescriptor(of channel: any Channel) -> CInt? {
        #if os(Linux)
        guard let local = channel.localAddress?.port, let remote = channel.remoteAddress?.port,
              let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let fd = Int32(name), fd > 2, names(fd, local: local, remote: remote) else { continue }
            _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
            let duplicate = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            guard duplicate >= 0 else { return nil }
            guard names(duplicate, local: local, remote: remote) else {
                close(duplicate)
                return nil
            }
            return duplicate
        }
        #endif
        return nil
    }

    #if os(Linux)
    private static func names(_ fd: CInt, local: Int, remote: Int) -> Bool {
        port(of: fd, getsockname) == local && port(of: fd, getpeername) == remote
    }
    #endif

    #if os(Linux)
    private static func port(
        of fd: Int32, _ query: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> Int? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { query(fd, $0, &length) == 0 }
        }
        guard ok else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        default:
            return nil
        }
    }
    #endif
}
