import Foundation

/// A throwaway PKI for TLS tests, made with `openssl` in a temporary
/// directory: a CA, a server certificate for `serverNames` (`localhost` and
/// `127.0.0.1` by default) signed by it, a client certificate signed by it, and a second CA that
/// signed neither (a client trusting only it must refuse the server).
public struct TestCertificates: Sendable {
    public let directory: TemporaryDirectory
    public var caCertificate: String { directory.path + "/ca.crt" }
    public var serverCertificate: String { directory.path + "/server.crt" }
    public var serverKey: String { directory.path + "/server.key" }
    public var clientCertificate: String { directory.path + "/client.crt" }
    public var clientKey: String { directory.path + "/client.key" }
    /// A CA that signed nothing here.
    public var otherCACertificate: String { directory.path + "/other-ca.crt" }

    public struct Failed: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `openssl` six times (P-256 keys: quick). Throws, with openssl's
    /// output, if a step fails.
    /// - Parameter serverNames: the server certificate's subject alternative names.
    public init(serverNames: [String] = ["DNS:localhost", "IP:127.0.0.1"]) async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else {
            throw RedisServer.Missing(program: "openssl")
        }
        directory = TemporaryDirectory("strata-tls")
        let dir = directory.path
        try "subjectAltName=\(serverNames.joined(separator: ","))\n".write(toFile: dir + "/server.ext", atomically: true, encoding: .utf8)
        try "extendedKeyUsage=clientAuth\n".write(toFile: dir + "/client.ext", atomically: true, encoding: .utf8)
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
             "-subj", "/CN=Strata Test CA", "-keyout", "ca.key", "-out", "ca.crt"],
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
             "-subj", "/CN=Strata Other CA", "-keyout", "other-ca.key", "-out", "other-ca.crt"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=localhost",
             "-keyout", "server.key", "-out", "server.csr"],
            ["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
             "-extfile", "server.ext", "-out", "server.crt"],
            ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=strata-client",
             "-keyout", "client.key", "-out", "client.csr"],
            ["x509", "-req", "-in", "client.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
             "-extfile", "client.ext", "-out", "client.crt"],
        ]
        for step in steps { try await Self.openssl(step, in: dir) }
    }

    private static func openssl(_ arguments: [String], in directory: String) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let exited = await process.exit(within: .seconds(60))  // its output is a few lines: the pipe never fills
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard exited, process.terminationStatus == 0 else {
            throw Failed(description: "openssl \(arguments.joined(separator: " ")) failed: \(text)")
        }
    }

    public func remove() { directory.remove() }
}
