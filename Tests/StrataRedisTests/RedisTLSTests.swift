import Foundation
import Strata
@testable import StrataRedis
import StrataTestSupport
import Synchronization
import Testing

/// `rediss://` with a real `redis-server` that speaks TLS only (`--port 0
/// --tls-port …`), on certificates `openssl` makes for each test.
@Suite(.serialized) struct RedisTLSTests {
    func level(_ server: RedisServer, _ tls: RedisTLS, prefix: String, host: String = "127.0.0.1",
               connections: Int = 2) throws -> RedisCacheLevel<String, String> {
        let configuration = try RedisConfiguration(url: "rediss://\(host):\(server.port)", connections: connections, tls: tls)
        return try RedisCacheLevel(configuration: configuration, prefix: prefix, codec: .string)
    }

    @Test func aRedissLevelGetsSetsAndHearsInvalidations() async throws {
        let certificates = try await TestCertificates()
        defer { certificates.remove() }
        let server = try await RedisServer(.init(tls: .init(certificates)))
        #expect(server.url.hasPrefix("rediss://"))
        let redis = try level(server, RedisTLS(caCertificateFile: certificates.caCertificate), prefix: "tls1:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + redis
        #expect(await poll { redis.isReceivingInvalidations }, "subscribed over TLS: \(redis.invalidationError ?? "")")

        try await cache.set("v1", forKey: "k")
        #expect(try await redis.getIfPresent("k") == "v1")
        #expect(try await redisCLI(server, "GET", "tls1:k").contains("v1"), "in Redis (read through the Unix socket)")
        #expect(try await cache.get("k") == "v1")
        await cache.waitForPendingWrites()
        #expect(try await memory.getIfPresent("k") == "v1")

        #expect(try await redisCLI(server, "SET", "tls1:k", "v2").contains("OK"))
        #expect(try await poll { try await memory.getIfPresent("k") == nil }, "memory dropped the key")
        #expect(try await cache.get("k") == "v2")
        let batch = await redis.batchGetSome(["k", "missing"])
        #expect(batch == ["k": "v2"])

        // The server has no plain TCP port: every connection of the level,
        // the tracking one too, came in on the TLS port.
        let lines = try await clientList(redis.client).filter { $0.contains("laddr=127.0.0.1:") }
        #expect(lines.count >= 2 && lines.allSatisfy { $0.contains("laddr=127.0.0.1:\(server.port) ") }, "\(lines)")
        #expect(lines.contains { $0.contains("name=\(RedisInvalidationSubscriber.clientName) ") }, "\(lines)")
        // Writes go through NIOSSL, never straight to the socket.
        let connection = try await redis.client.connection()
        #expect(!connection.queue.hasDescriptor)
        await redis.shutdown(); await server.kill()
    }

    @Test func theServerNameIsVerified() async throws {
        // Named `localhost` only: NIOSSL accepts a certificate whose IP
        // addresses include the one connected to, whatever name was asked for.
        let certificates = try await TestCertificates(serverNames: ["DNS:localhost"])
        defer { certificates.remove() }
        let server = try await RedisServer(.init(tls: .init(certificates)))
        let ca = certificates.caCertificate
        // By DNS name, from the URL's host or given (sent as SNI).
        for (host, tls) in [("localhost", RedisTLS(caCertificateFile: ca)), ("127.0.0.1", RedisTLS(caCertificateFile: ca, serverName: "localhost"))] {
            let named = try level(server, tls, prefix: "tls2a:", host: host, connections: 1)
            try await named.set("v", forKey: "k")
            #expect(try await named.getIfPresent("k") == "v", "\(host) \(tls)")
            await named.shutdown()
        }

        // A name the certificate does not carry: refused, in words.
        for (host, tls, name) in [("127.0.0.1", RedisTLS(caCertificateFile: ca, serverName: "redis.example.org"), "redis.example.org"),
                                  ("127.0.0.1", RedisTLS(caCertificateFile: ca), "127.0.0.1")] {
            let misnamed = try level(server, tls, prefix: "tls2b:", host: host, connections: 1)
            let error = await #expect(throws: RedisError.self) { try await misnamed.getIfPresent("k") }
            if case .tlsFailed(let text)? = error {
                #expect(text.contains("the server's certificate does not name \(name)"), "\(text)")
            } else {
                Issue.record("\(tls): \(String(describing: error))")
            }
            await misnamed.shutdown()
        }

        // The same name, with server-name verification off: the chain is still checked, and holds.
        let unverified = try level(server, RedisTLS(caCertificateFile: ca, serverName: "redis.example.org", verifiesServerName: false),
                                   prefix: "tls2c:", connections: 1)
        #expect(try await unverified.getIfPresent("k") == nil)
        await unverified.shutdown()
        let untrusted = try level(server, RedisTLS(caCertificateFile: certificates.otherCACertificate, verifiesServerName: false),
                                  prefix: "tls2d:", connections: 1)
        await #expect(throws: RedisError.self) { try await untrusted.getIfPresent("k") }
        await untrusted.shutdown()
        await server.kill()
    }

    @Test func aClientThatDoesNotTrustTheCAIsRefusedInWords() async throws {
        let certificates = try await TestCertificates()
        defer { certificates.remove() }
        let server = try await RedisServer(.init(tls: .init(certificates)))
        for tls in [RedisTLS(caCertificateFile: certificates.otherCACertificate), RedisTLS()] {  // another CA; the system's roots
            let redis = try level(server, tls, prefix: "tls3:", connections: 1)
            let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
            let cache = memory + redis
            let error = await #expect(throws: RedisError.self) { try await redis.getIfPresent("k") }
            guard case .tlsFailed(let text)? = error else { Issue.record("\(tls): \(String(describing: error))"); continue }
            #expect(text.contains("127.0.0.1:\(server.port)"), "\(text)")
            #expect(text.contains("the server's certificate is not trusted"), "\(text)")
            // The invalidation connection is refused the same way.
            #expect(await poll { redis.invalidationError?.contains("not trusted") == true }, "\(redis.invalidationError ?? "nil")")
            #expect(!redis.isReceivingInvalidations)
            _ = cache
            await redis.shutdown()
        }
        await server.kill()
    }

    @Test func mutualTLSWantsTheClientCertificate() async throws {
        let certificates = try await TestCertificates()
        defer { certificates.remove() }
        let server = try await RedisServer(.init(tls: .init(certificates, requiresClientCertificates: true)))
        let withCertificate = try level(server, RedisTLS(caCertificateFile: certificates.caCertificate,
                                                         certificateFile: certificates.clientCertificate,
                                                         privateKeyFile: certificates.clientKey), prefix: "tls4a:")
        let memory = MemoryCacheLevel<String, String>(capacity: 1 << 20)
        let cache = memory + withCertificate
        #expect(await poll { withCertificate.isReceivingInvalidations }, "\(withCertificate.invalidationError ?? "")")
        try await cache.set("v", forKey: "k")
        #expect(try await withCertificate.getIfPresent("k") == "v")
        await withCertificate.shutdown()

        let without = try level(server, RedisTLS(caCertificateFile: certificates.caCertificate), prefix: "tls4b:", connections: 1)
        let error = await #expect(throws: RedisError.self) { try await without.getIfPresent("k") }
        guard case .tlsFailed(let text)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(text.contains("client certificate"), "\(text)")
        await without.shutdown()
        await server.kill()
    }

    @Test func aPlainPortIsNotTakenForTLS() async throws {
        let server = try await RedisServer()  // plain TCP only
        let client = RedisClient(configuration: try RedisConfiguration(
            url: "rediss://127.0.0.1:\(server.port)", connections: 1, connectTimeout: .milliseconds(300)))
        let error = await #expect(throws: RedisError.self) { try await client.send("PING") }
        // No answer to the handshake (Redis waits for a command line), or one that is not TLS.
        #expect("\(error.map { "\($0)" } ?? "")".contains("a plain redis:// port?"), "\(String(describing: error))")
        await client.shutdown()
        await server.kill()
    }

    @Test func unreadableFilesAreRefusedBeforeConnecting() async throws {
        // No server: the files are read before any connect.
        let missing = RedisClient(configuration: try RedisConfiguration(
            url: "rediss://127.0.0.1:1", connections: 1, tls: RedisTLS(caCertificateFile: "/nonexistent/ca.crt")))
        let error = await #expect(throws: RedisError.self) { try await missing.send("PING") }
        #expect(error == .tlsFailed("cannot read the CA certificate file /nonexistent/ca.crt: no such file or directory"),
                "\(String(describing: error))")
        await missing.shutdown()

        let certificates = try await TestCertificates()
        defer { certificates.remove() }
        let halves = RedisClient(configuration: try RedisConfiguration(
            url: "rediss://127.0.0.1:1", connections: 1, tls: RedisTLS(certificateFile: certificates.clientCertificate)))
        let second = await #expect(throws: RedisError.self) { try await halves.send("PING") }
        #expect(second == .tlsFailed("a client certificate needs its private key (privateKeyFile)"), "\(String(describing: second))")
        await halves.shutdown()

        let notPEM = RedisClient(configuration: try RedisConfiguration(
            url: "rediss://127.0.0.1:1", connections: 1, tls: RedisTLS(caCertificateFile: certificates.directory.path + "/server.ext")))
        let third = await #expect(throws: RedisError.self) { try await notPEM.send("PING") }
        guard case .tlsFailed(let text)? = third else { Issue.record("\(String(describing: third))"); return }
        #expect(text.contains("server.ext"), "\(text)")
        await notPEM.shutdown()
    }
}
