import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The descriptor of a connected channel's socket, which NIO does not
/// expose: found among the process's descriptors by its local and remote
/// addresses (IP and port, both in full).
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
    ///
    /// A socket is the channel's only if both its addresses match the
    /// channel's in full (family, IP address and port): the kernel gives the
    /// same local port to connections with different destinations, so ports
    /// alone could pick another connection's socket.
    static func duplicateDescriptor(of channel: any Channel) -> CInt? {
        #if os(Linux)
        guard let local = channel.localAddress.flatMap(Endpoint.init), let remote = channel.remoteAddress.flatMap(Endpoint.init),
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

    /// An IP address (its bytes) and a port.
    struct Endpoint: Equatable {
        let address: [UInt8]
        let port: Int

        init?(_ address: SocketAddress) {
            switch address {
            case .v4(let v4):
                var raw = v4.address.sin_addr
                self.address = withUnsafeBytes(of: &raw) { Array($0) }
                port = Int(UInt16(bigEndian: v4.address.sin_port))
            case .v6(let v6):
                var raw = v6.address.sin6_addr
                self.address = withUnsafeBytes(of: &raw) { Array($0) }
                port = Int(UInt16(bigEndian: v6.address.sin6_port))
            default:
                return nil
            }
        }

        init(address: [UInt8], port: Int) {
            self.address = address
            self.port = port
        }
    }

    #if os(Linux)
    private static func names(_ fd: CInt, local: Endpoint, remote: Endpoint) -> Bool {
        endpoint(of: fd, getsockname) == local && endpoint(of: fd, getpeername) == remote
    }

    private static func endpoint(
        of fd: Int32, _ query: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> Endpoint? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { query(fd, $0, &length) == 0 }
        }
        guard ok else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    var raw = pointer.pointee.sin_addr
                    return Endpoint(address: withUnsafeBytes(of: &raw) { Array($0) }, port: Int(UInt16(bigEndian: pointer.pointee.sin_port)))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    var raw = pointer.pointee.sin6_addr
                    return Endpoint(address: withUnsafeBytes(of: &raw) { Array($0) }, port: Int(UInt16(bigEndian: pointer.pointee.sin6_port)))
                }
            }
        default:
            return nil
        }
    }
    #endif
}
