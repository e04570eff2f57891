import NIOCore
import NIOSSL
import NIOTLS
#if canImport(Glibc)
import Glibc
#endif

/// TLS settings of a Redis connection (`rediss://`), through swift-nio-ssl.
///
/// The files are PEM and are read at each connect, so a renewed certificate
/// is used by the next connection. A file that cannot be read, or a
/// handshake that fails, fails the connect with ``RedisError/tlsFailed(_:)``
/// saying why in words.
public struct RedisTLS: Sendable, Equatable, CustomStringConvertible {
    /// The CA certificates (PEM, one or more) that the server's certificate
    /// must chain to; `nil` for the system's trust roots.
    public var caCertificateFile: String?
    /// This client's certificate chain (PEM), for servers that ask for one
    /// (mutual TLS, Redis's `tls-auth-clients`). Needs ``privateKeyFile``.
    public var certificateFile: String?
    /// The private key (PEM) of ``certificateFile``.
    public var privateKeyFile: String?
    /// The name the server's certificate must carry, also sent as SNI; `nil`
    /// for the configuration's host. An IP address is matched against the
    /// certificate's IP addresses (and sends no SNI). As NIOSSL verifies, a
    /// certificate that lists the IP address connected to is accepted
    /// whatever the name.
    public var serverName: String?
    /// Whether the server's certificate must name ``serverName`` (or the
    /// host). On by default; off still checks that the certificate chains to
    /// a trusted CA.
    public var verifiesServerName: Bool

    /// Settings with these files and names; the defaults verify the server
    /// against the system's trust roots and present no client certificate.
    public init(caCertificateFile: String? = nil, certificateFile: String? = nil, privateKeyFile: String? = nil,
                serverName: String? = nil, verifiesServerName: Bool = true) {
        self.caCertificateFile = caCertificateFile
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.serverName = serverName
        self.verifiesServerName = verifiesServerName
    }

    /// The settings in one line: file paths and names, never file contents.
    public var description: String {
        var parts = ["ca: \(caCertificateFile ?? "system")"]
        if let certificateFile { parts.append("client certificate: \(certificateFile)") }
        if let serverName { parts.append("server name: \(serverName)") }
        if !verifiesServerName { parts.append("server name not verified") }
        return "TLS(\(parts.joined(separator: ", ")))"
    }

    /// A client context from the files; their problems as ``RedisError/tlsFailed(_:)``.
    func makeContext() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = verifiesServerName ? .fullVerification : .noHostnameVerification
        if let caCertificateFile {
            let roots = try Self.load("CA certificate file", caCertificateFile) { try NIOSSLCertificate.fromPEMFile($0) }
            guard !roots.isEmpty else { throw RedisError.tlsFailed("CA certificate file \(caCertificateFile): no PEM certificate in it") }
            configuration.trustRoots = .certificates(roots)
        }
        switch (certificateFile, privateKeyFile) {
        case (nil, nil): break
        case (let certificateFile?, let privateKeyFile?):
            let chain = try Self.load("client certificate file", certificateFile) { try NIOSSLCertificate.fromPEMFile($0) }
            guard !chain.isEmpty else { throw RedisError.tlsFailed("client certificate file \(certificateFile): no PEM certificate in it") }
            configuration.certificateChain = chain.map { .certificate($0) }
            let key = try Self.load("private key file", privateKeyFile) { try NIOSSLPrivateKey(file: $0, format: .pem) }
            configuration.privateKey = .privateKey(key)
        case (_?, nil): throw RedisError.tlsFailed("a client certificate needs its private key (privateKeyFile)")
        case (nil, _?): throw RedisError.tlsFailed("a private key needs its client certificate (certificateFile)")
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch NIOSSLError.failedToLoadPrivateKey where privateKeyFile != nil {
            throw RedisError.tlsFailed("the private key \(privateKeyFile ?? "") does not belong to the client certificate \(certificateFile ?? "")")
        } catch {
            throw RedisError.tlsFailed("cannot set up TLS: \(clipped("\(error)", to: 300))")
        }
    }

    private static func load<T>(_ what: String, _ path: String, _ body: (String) throws -> T) throws -> T {
        guard access(path, R_OK) == 0 else {
            throw RedisError.tlsFailed("cannot read the \(what) \(path): \(String(cString: strerror(errno)).lowercased())")
        }
        do { return try body(path) } catch {
            throw RedisError.tlsFailed("the \(what) \(path) is not PEM that TLS can use")
        }
    }

    /// The name to send as SNI and to verify: `nil` for an IP address (SNI
    /// cannot carry one; the certificate is then matched against the peer's address).
    static func serverHostname(_ name: String) -> String? {
        (try? SocketAddress(ipAddress: name, port: 0)) == nil ? name : nil
    }

    /// Whether `error` comes from NIOSSL.
    static func isTLSError(_ error: any Error) -> Bool {
        error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError
    }

    /// A TLS failure in words, not BoringSSL's error stack.
    static func words(for error: any Error, host: String) -> String {
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return "the server's certificate does not name \(host) (serverName, or verifiesServerName: false)"
        }
        let text = "\(error)"
        let known: [(String, String)] = [
            ("CERTIFICATE_VERIFY_FAILED", "the server's certificate is not trusted (it does not chain to the CA certificates given: caCertificateFile)"),
            ("CERTIFICATE_REQUIRED", "the server wants a client certificate (certificateFile and privateKeyFile)"),
            ("ALERT_UNKNOWN_CA", "the server does not trust this client's certificate"),
            ("ALERT_BAD_CERTIFICATE", "the server refused this client's certificate"),
            ("ALERT_HANDSHAKE_FAILURE", "the server refused the handshake (a client certificate it wants, or no common cipher)"),
            ("WRONG_VERSION_NUMBER", "the server did not answer in TLS (a plain redis:// port?)"),
            ("KEY_VALUES_MISMATCH", "the private key does not belong to the client certificate"),
            ("EOF during handshake", "the server closed the connection during the TLS handshake (a plain redis:// port, or a client certificate it wants?)"),
        ]
        if let (_, words) = known.first(where: { text.contains($0.0) }) { return words }
        return "handshake failed: \(clipped(text, to: 300))"
    }
}

/// Waits for the TLS handshake of a new connection (behind
/// `NIOSSLClientHandler`): ``done`` succeeds once it completes and fails
/// with the handshake's error, the connection's close, or the timeout.
/// Everything passes through unchanged; it leaves the pipeline once the
/// handshake is done.
final class RedisTLSHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let done: EventLoopPromise<Void>
    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?
    private var finished = false

    init(done: EventLoopPromise<Void>, timeout: TimeAmount) {
        self.done = done
        self.timeout = timeout
    }

    /// Added before the channel connects: the timer starts once it is active.
    func channelActive(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let milliseconds = timeout.nanoseconds / 1_000_000
        timer = context.eventLoop.scheduleTask(in: timeout) {
            let (handler, context) = bound.value
            handler.finish(.failure(RedisError.connectionFailed("TLS handshake: no answer within \(milliseconds) ms (a plain redis:// port?)")))
            context.close(promise: nil)
        }
        context.fireChannelActive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            finish(.success(()))
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        finish(.failure(error))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish(.failure(RedisError.tlsFailed("the server closed the connection during the TLS handshake")))
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(.failure(RedisError.tlsFailed("the TLS handshake was abandoned")))
    }

    private func finish(_ result: Result<Void, any Error>) {
        guard !finished else { return }
        finished = true
        timer?.cancel()
        timer = nil
        done.completeWith(result)
    }
}
