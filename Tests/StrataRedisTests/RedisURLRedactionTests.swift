import Foundation
@testable import StrataRedis
import Testing

/// A Redis URL may carry the server's password; error messages reach the
/// terminal and log files, so every URL they show has it replaced by `***`.
@Suite struct RedisURLRedactionTests {
    @Test(arguments: [
        ("redis://:s3cret@cache.internal:6380/3", "redis://:***@cache.internal:6380/3"),
        ("redis://admin:s3cret@cache.internal", "redis://admin:***@cache.internal"),
        ("redis://s3cret@cache.internal", "redis://***@cache.internal"),
        ("redis://:p@ss:s3cret@h:1", "redis://:***@h:1"),
        ("http://:s3cret@h", "http://:***@h"),
        (":s3cret@h", ":***@h"),
        ("redis://cache.internal:6380", "redis://cache.internal:6380"),
        ("redis://", "redis://"),
    ])
    func redactedURLsKeepEverythingButThePassword(url: String, redacted: String) {
        #expect(RedisConfiguration.redacted(url) == redacted)
    }

    @Test(arguments: [
        "http://:s3cret@cache.internal:6380",
        "redis://:s3cret@cache.internal:6380/abc",
        "redis://:s3cret@cache.internal:99999",
        "redis://:s3cret@:6380",
        "redis://:s3cret@cache internal:6380",
    ])
    func invalidURLErrorsDoNotShowThePassword(url: String) {
        let error = #expect(throws: RedisError.self) { try RedisConfiguration(url: url) }
        let text = String(describing: error)
        #expect(!text.contains("s3cret"), "\(text)")
        #expect(text.contains(":***@"), "\(text)")
    }

    @Test func aConfigurationDescribesItselfWithoutThePassword() throws {
        let configuration = try RedisConfiguration(url: "redis://:s3cret@cache.internal:6380/3")
        #expect(configuration.password == "s3cret")
        for text in ["\(configuration)", String(reflecting: configuration)] {
            #expect(!text.contains("s3cret"), "\(text)")
            #expect(text.contains("cache.internal:6380"), "\(text)")
        }
    }
}

/// Whatever the parser takes as the password is what redaction hides.
@Suite struct RedisURLRedactionAgreesWithTheParser {
    @Test(arguments: ["redis://user:@h", "redis://user::pw@h", "redis://::pw@h", "redis://a:b:c@h", "redis://:@h", "redis://@h"])
    func thePasswordNeverShows(url: String) throws {
        let password = try RedisConfiguration(url: url).password ?? ""
        let redacted = RedisConfiguration.redacted(url)
        #expect(redacted.hasSuffix("***@h"), "\(redacted)")
        if !password.isEmpty { #expect(!redacted.contains(password), "\(redacted) shows \(password)") }
    }
}

/// `redis://user:password@…` (ACL users) and `rediss://` (TLS).
@Suite struct RedisURLUserAndTLSTests {
    @Test func aUserAndPasswordAreBothTaken() throws {
        let configuration = try RedisConfiguration(url: "redis://app:s3cret@cache.internal:6380/2")
        #expect(configuration.username == "app")
        #expect(configuration.password == "s3cret")
        #expect(configuration.database == 2)
        #expect(configuration.tls == nil)
        #expect("\(configuration)" == "redis://app:***@cache.internal:6380/2 (2 connections)")
    }

    @Test(arguments: [
        ("redis://:s3cret@h", nil, "s3cret"),
        ("redis://s3cret@h", nil, "s3cret"),
        ("redis://user:@h", nil, "user"),  // as before: `name:` is a password
        ("redis://a:b:c@h", "a", "b:c"),
        ("redis://h", nil, nil),
    ] as [(String, String?, String?)])
    func theDefaultUserKeepsItsForms(url: String, username: String?, password: String?) throws {
        let configuration = try RedisConfiguration(url: url)
        #expect(configuration.username == username)
        #expect(configuration.password == password)
    }

    @Test func redissMeansTLSWithTheDefaults() throws {
        let configuration = try RedisConfiguration(url: "rediss://app:s3cret@cache.internal:6380")
        #expect(configuration.tls == RedisTLS())
        #expect(configuration.tls?.verifiesServerName == true)
        #expect(configuration.username == "app")
        #expect("\(configuration)" == "rediss://app:***@cache.internal:6380/0 (2 connections)")
        #expect(RedisConfiguration.redacted("rediss://app:s3cret@cache.internal:6380") == "rediss://app:***@cache.internal:6380")
        let files = RedisTLS(caCertificateFile: "/etc/ca.pem")
        #expect(try RedisConfiguration(url: "rediss://h", tls: files).tls == files)
        #expect(try RedisConfiguration(url: "redis://h", tls: files).tls == files, "given settings turn TLS on")
        let text = String(reflecting: try RedisConfiguration(url: "rediss://app:s3cret@h", tls: files))
        #expect(!text.contains("s3cret") && text.contains("/etc/ca.pem"), "\(text)")
    }

    @Test func otherSchemesAreRefused() {
        let error = #expect(throws: RedisError.self) { try RedisConfiguration(url: "http://app:s3cret@h") }
        let text = "\(error!)"
        #expect(text.contains("rediss://") && !text.contains("s3cret"), "\(text)")
    }
}
