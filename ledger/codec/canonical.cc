#include "ledger/codec/canonical.h"

#include <cstring>

namespace tessera::ledger {

namespace {
template <typename T>
void PutBigEndian(std::string& out, T v) {
  char buf[sizeof(T)];
  for (int i = sizeof(T) - 1; i >= 0; --i, v = static_cast<T>(v >> 8)) {
    buf[i] = static_cast<char>(v & 0xff);
  }
  out.append(buf, sizeof(T));
}
template <typename T>
T GetBigEndian(const uint8_t* in) {
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>(v << 8 | in[i]);
  return v;
}
}  // namespace

CanonicalWriter& CanonicalWriter::U8(uint8_t v) {
  out_.push_back(static_cast<char>(v));
  return *this;
}
CanonicalWriter& CanonicalWriter::U16(uint16_t v) {
  PutBigEndian(out_, v);
  return *this;
}
CanonicalWriter& CanonicalWriter::U32(uint32_t v) {
  PutBigEndian(out_, v);
  return *this;
}
CanonicalWriter& CanonicalWriter::U64(uint64_t v) {
  PutBigEndian(out_, v);
  return *this;
}
CanonicalWriter& CanonicalWriter::Raw(ByteSpan bytes) {
  out_.append(AsChars(bytes));
  return *this;
}

CanonicalWriter& CanonicalWriter::Bytes(ByteSpan bytes) {
  U32(static_cast<uint32_t>(bytes.size()));
  return Raw(bytes);
}

Status CanonicalReader::Raw(uint8_t* out, size_t n, const char* field) {
  if (remaining() < n) {
    return InvalidArgumentError(std::string(message_) + ": truncated at offset " +
                                std::to_string(pos_) + " reading '" + field + "' (need " +
                                std::to_string(n) + " bytes, " + std::to_string(remaining()) +
                                " left)");
  }
  std::memcpy(out, bytes_.data() + pos_, n);
  pos_ += n;
  return Status::Ok();
}

Status CanonicalReader::U8(uint8_t* v, const char* field) { return Raw(v, 1, field); }

Status CanonicalReader::U16(uint16_t* v, const char* field) {
  uint8_t buf[2];
  TESSERA_RETURN_IF_ERROR(Raw(buf, 2, field));
  *v = GetBigEndian<uint16_t>(buf);
  return Status::Ok();
}

Status CanonicalReader::U32(uint32_t* v, const char* field) {
  uint8_t buf[4];
  TESSERA_RETURN_IF_ERROR(Raw(buf, 4, field));
  *v = GetBigEndian<uint32_t>(buf);
  return Status::Ok();
}

Status CanonicalReader::U64(uint64_t* v, const char* field) {
  uint8_t buf[8];
  TESSERA_RETURN_IF_ERROR(Raw(buf, 8, field));
  *v = GetBigEndian<uint64_t>(buf);
  return Status::Ok();
}

Status CanonicalReader::Bool(bool* v, const char* field) {
  size_t at = pos_;
  uint8_t b;
  TESSERA_RETURN_IF_ERROR(U8(&b, field));
  if (b > 1) {
    return InvalidArgumentError(std::string(message_) + ": non-canonical boolean " +
                                std::to_string(b) + " in '" + field + "' at offset " +
                                std::to_string(at));
  }
  *v = b == 1;
  return Status::Ok();
}

Status CanonicalReader::Count(uint32_t* count, uint32_t limit, size_t min_element_size,
                              const char* field) {
  size_t at = pos_;
  TESSERA_RETURN_IF_ERROR(U32(count, field));
  if (*count > limit) {
    return InvalidArgumentError(std::string(message_) + ": '" + field + "' count " +
                                std::to_string(*count) + " exceeds the limit " +
                                std::to_string(limit) + " (offset " + std::to_string(at) + ")");
  }
  if (static_cast<uint64_t>(*count) * min_element_size > remaining()) {
    return InvalidArgumentError(
        std::string(message_) + ": truncated: '" + field + "' count " + std::to_string(*count) +
        " needs at least " + std::to_string(*count * min_element_size) + " bytes, " +
        std::to_string(remaining()) + " left (offset " + std::to_string(at) + ")");
  }
  return Status::Ok();
}

Status CanonicalReader::Bytes(std::string* out, uint32_t limit, const char* field) {
  uint32_t size;
  TESSERA_RETURN_IF_ERROR(Count(&size, limit, 1, field));
  out->assign(reinterpret_cast<const char*>(bytes_.data() + pos_), size);
  pos_ += size;
  return Status::Ok();
}

Status CanonicalReader::Finish() const {
  if (remaining() == 0) return Status::Ok();
  return InvalidArgumentError(std::string(message_) + ": " + std::to_string(remaining()) +
                              " trailing bytes after the last field (offset " +
                              std::to_string(pos_) + ")");
}

Status CanonicalReader::Error(std::string_view what) const {
  return InvalidArgumentError(std::string(message_) + ": " + std::string(what) + " (at offset " +
                              std::to_string(pos_) + ")");
}

}  // namespace tessera::ledger
