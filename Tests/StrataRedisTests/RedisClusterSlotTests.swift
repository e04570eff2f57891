import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
@testable import StrataRedis
import StrataTestSupport
import Testing

/// Key slots (CRC16 with hash tags), redirect replies and `CLUSTER SLOTS`
/// parsing, against the specification's vectors and a real cluster's answers.
@Suite(.serialized) struct RedisClusterSlotTests {
    @Test func crc16MatchesTheSpecificationVector() {
        #expect(RedisClusterSlot.crc16(Array("123456789".utf8)) == 0x31C3)
        #expect(RedisClusterSlot.of(Array("123456789".utf8)) == 0x31C3 & 16383)
        #expect(RedisClusterSlot.crc16([UInt8]()) == 0)
    }

    @Test func hashTagsFollowTheSpecification() {
        func slot(_ text: String) -> Int { RedisClusterSlot.of(Array(text.utf8)) }
        #expect(slot("{user1000}.following") == slot("user1000"))
        #expect(slot("{user1000}.followers") == slot("user1000"))
        #expect(slot("foo{}{bar}") == slot("foo{}{bar}"))  // empty tag: the whole key is hashed
        #expect(slot("foo{}{bar}") != slot("bar") || slot("foo{}{bar}") == slot("bar"))
        #expect(slot("foo{{bar}}zap") == slot("{bar"))  // from the first { to the first } after it
        #expect(slot("foo{bar}{zap}") == slot("bar"))
        #expect(slot("no-braces{") == RedisClusterSlot.of(Array("no-braces{".utf8)))
        #expect(Array(RedisClusterSlot.hashedPart(of: Array("foo{}{bar}".utf8))) == Array("foo{}{bar}".utf8))
        #expect(Array(RedisClusterSlot.hashedPart(of: Array("a{b}c".utf8))) == Array("b".utf8))
        #expect(Array(RedisClusterSlot.hashedPart(of: Array("a}b{c".utf8))) == Array("a}b{c".utf8))
    }

    @Test func everySlotHasAShortTagThatLandsInIt() {
        for slot in 0..<RedisClusterSlot.count {
            let tag = RedisClusterSlot.hashTag(forSlot: slot)
            #expect(tag.count <= 5 && tag.first == UInt8(ascii: "{") && tag.last == UInt8(ascii: "}"))
            // A tombstone named with it lands in the slot whatever follows.
            #expect(RedisClusterSlot.of(Array("strata-tombstone:".utf8) + tag + Array("app:{x}y".utf8)) == slot)
        }
    }

    @Test func redirectRepliesParse() {
        #expect(RedisClusterRedirect(message: "MOVED 3999 127.0.0.1:6381") == .moved(slot: 3999, address: "127.0.0.1:6381"))
        #expect(RedisClusterRedirect(message: "ASK 3999 127.0.0.1:6381") == .ask(slot: 3999, address: "127.0.0.1:6381"))
        #expect(RedisClusterRedirect(message: "TRYAGAIN Multiple keys request during rehashing of slot") == .tryAgain)
        #expect(RedisClusterRedirect(message: "MOVED 3999 :6381") == .moved(slot: 3999, address: "?:6381"))
        #expect(RedisClusterRedirect(message: "MOVED 99999 127.0.0.1:6381") == .malformed("MOVED 99999 127.0.0.1:6381"))
        #expect(RedisClusterRedirect(message: "MOVED 1 127.0.0.1:abc") == .malformed("MOVED 1 127.0.0.1:abc"))
        #expect(RedisClusterRedirect(message: "ASK 1 127.0.0.1:0") == .malformed("ASK 1 127.0.0.1:0"))
        #expect(RedisClusterRedirect(message: "MOVED 1 127.0.0.1") == .malformed("MOVED 1 127.0.0.1"))
        #expect(RedisClusterRedirect(message: "MOVED 1 ::1:7000") == .moved(slot: 1, address: "::1:7000"))
        #expect(RedisClusterRedirect(message: "ERR wrong number of arguments") == nil)
        #expect(RedisClusterRedirect(message: "CLUSTERDOWN Hash slot not served") == nil)
        #expect(RedisClusterRedirect(.simpleString("MOVED 1 a:1")) == nil)
    }

    @Test func commandsAreRoutedByTheirKey() {
        func slot(_ words: String...) -> Int? { RedisClusterRouter.slot(ofCommand: words.map { Array($0.utf8) }) }
        #expect(slot("GET", "a{b}") == RedisClusterSlot.of(Array("b".utf8)))
        #expect(slot("EVAL", "return 1", "1", "k", "v") == RedisClusterSlot.of(Array("k".utf8)))
        #expect(slot("EVAL", "return 1", "0") == nil)
        #expect(slot("PING") == nil)
        #expect(slot("INFO", "commandstats") == nil)
        #expect(slot("scan", "0") == nil)
        #expect(slot("OBJECT", "FREQ", "k") == RedisClusterSlot.of(Array("k".utf8)), "the inspector's OBJECT FREQ")
        #expect(slot("OBJECT", "HELP") == nil)
    }

    @Test func malformedClusterSlotsRepliesThrow() {
        #expect(throws: RedisError.self) { try RedisClusterTopology(slotsReply: .integer(1), askedHost: "h") }
        #expect(throws: RedisError.self) { try RedisClusterTopology(slotsReply: .array([]), askedHost: "h") }
        #expect(throws: RedisError.self) {
            try RedisClusterTopology(slotsReply: .array([.array([.integer(5), .integer(2), .array([])])]), askedHost: "h")
        }
        #expect(throws: RedisError.self) {
            try RedisClusterTopology(slotsReply: .array([.array([.integer(0), .integer(16384),
                                                                 .array([.bulkString(ByteBuffer(string: "h")), .integer(1)])])]), askedHost: "h")
        }
    }

    /// The slot of 2,000 random keys (binary bytes, braces in odd places)
    /// is what `CLUSTER KEYSLOT` of a real cluster node answers.
    @Test func slotsAgreeWithARealClusterForRandomKeys() async throws {
        let cluster = try await RedisCluster(masters: 3)
        let client = try RedisClient(cluster: cluster.seedURLs)
        let node = try #require(try client.cluster?.node(cluster.addresses[0]))
        var random = SeededGenerator(seed: 33)
        let alphabet = Array("ab{}:x\u{0}\u{ff}z01".utf8)
        var keys: [[UInt8]] = [Array("123456789".utf8), Array("{}".utf8), Array("{".utf8), Array("}{".utf8)]
        for _ in 0..<2_000 { keys.append((0..<random.int(0..<12)).map { _ in random.pick(alphabet) }) }
        let replies = try await node.send(batch: keys.map { [Array("CLUSTER".utf8), Array("KEYSLOT".utf8), $0] })
        for (key, reply) in zip(keys, replies) {
            #expect(reply == .integer(RedisClusterSlot.of(key)), "key \(key)")
        }
        await client.shutdown()
        await cluster.kill()
    }

    @Test func theClusterMapNamesEveryMasterAndEverySlot() async throws {
        let cluster = try await RedisCluster(masters: 3)
        let client = try RedisClient(cluster: [cluster.seedURLs[1]])  // one seed finds the others
        let router = try #require(client.cluster)
        let topology = try await router.refreshTopology()
        #expect(Set(topology.masters) == Set(cluster.addresses))
        #expect(!topology.owners.contains(-1))
        for slot in [0, 5460, 5461, 10922, 10923, 16383] {
            let owner = try #require(try await cluster.owner(ofSlot: slot))
            #expect(topology.master(ofSlot: slot) == cluster.addresses[owner])
        }
        await client.shutdown()
        await cluster.kill()
    }
}
