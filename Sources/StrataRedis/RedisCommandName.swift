/// The names of the commands the client sends, as bytes made once: building
/// them per request (`Array("GET".utf8)`) was an allocation per command.
enum RedisCommandName {
    static let count = Array("COUNT".utf8)
    static let del = Array("DEL".utf8)
    static let eval = Array("EVAL".utf8)
    static let exec = Array("EXEC".utf8)
    static let exists = Array("EXISTS".utf8)
    static let get = Array("GET".utf8)
    static let match = Array("MATCH".utf8)
    static let mget = Array("MGET".utf8)
    static let multi = Array("MULTI".utf8)
    static let nx = Array("NX".utf8)
    static let ping = Array("PING".utf8)
    static let object = Array("OBJECT".utf8)
    static let freq = Array("FREQ".utf8)
    static let pttl = Array("PTTL".utf8)
    static let px = Array("PX".utf8)
    static let pxat = Array("PXAT".utf8)
    static let scan = Array("SCAN".utf8)
    static let set = Array("SET".utf8)
    static let strlen = Array("STRLEN".utf8)
    static let time = Array("TIME".utf8)
    static let unlink = Array("UNLINK".utf8)
    /// `CLIENT NO-TOUCH ON` and `OFF` (Redis 7.2+): reads on the connection leave keys' LRU/LFU clocks.
    static let noTouchOn = ["CLIENT", "NO-TOUCH", "ON"].map { Array($0.utf8) }
    static let noTouchOff = ["CLIENT", "NO-TOUCH", "OFF"].map { Array($0.utf8) }
}
