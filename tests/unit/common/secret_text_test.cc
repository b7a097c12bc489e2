#include "common/secret_text.h"

#include <gtest/gtest.h>

namespace layerlab {
namespace {

struct Case {
  const char* given;
  const char* shown;
};

TEST(MaskSecrets, HidesEverySecretOfEveryForm) {
  const Case cases[] = {
      // userinfo: everything before the last '@' after the user name
      {"postgresql://bob:pa#sswd@h:5432/db", "postgresql://bob:***@h:5432/db"},
      {"postgresql://bob:pa?ss@h/db", "postgresql://bob:***@h/db"},
      {"postgresql://bob:p@ss:w@h:1/db", "postgresql://bob:***@h:1/db"},
      {"postgresql://bob:a/b@h/db", "postgresql://bob:***@h/db"},
      {"postgresql://bob:p%40ss@h/db", "postgresql://bob:***@h/db"},
      {"postgres://bob:#?/:@x@h1:5432,h2:5433/db", "postgres://bob:***@h1:5432,h2:5433/db"},
      {"postgresql://bob@h/db", "postgresql://bob@h/db"},
      {"postgresql://h/db", "postgresql://h/db"},
      {"postgresql://[::1]:5432/db", "postgresql://[::1]:5432/db"},
      // query parameters, by their decoded, lower-cased key
      {"postgresql://h/db?user=u&password=pw&sslmode=require",
       "postgresql://h/db?user=u&password=***&sslmode=require"},
      {"postgresql:///db?password=pw", "postgresql:///db?password=***"},
      {"postgresql://bob@h/db?pass%77ord=secret", "postgresql://bob@h/db?pass%77ord=***"},
      {"postgresql://h/db?PASSWORD=pw", "postgresql://h/db?PASSWORD=***"},
      {"postgresql://h/db?sslpassword=pw&service=lab",
       "postgresql://h/db?sslpassword=***&service=lab"},
      {"postgresql://h/db?password=a#b&x=1", "postgresql://h/db?password=***&x=1"},
      {"postgresql://h/db?api_token=t&client_secret=s",
       "postgresql://h/db?api_token=***&client_secret=***"},
      {"postgresql://h/db?pa%zzss=x", "postgresql://h/db?pa%zzss=***"},
      // an '@' past the host: all that comes before it is hidden
      {"postgresql://h/db?password=pw&application_name=a@b", "postgresql://***@b"},
      // keyword/value strings
      {"host=x password='a b' sslpassword=c user=u", "host=x password=*** sslpassword=*** user=u"},
      {"host=x password = 'it\\'s' dbname=d", "host=x password = *** dbname=d"},
      {"service=lab", "service=lab"},
      {"dbname=postgresql://u:pw@h/db", "dbname=***"},
      // AMQP
      {"amqp://user:pa#ss@host:5672/vhost", "amqp://user:***@host:5672/vhost"},
      {"amqp://guest:guest@localhost", "amqp://guest:***@localhost"},
      // nothing secret
      {"sqlite:layerlab.db", "sqlite:layerlab.db"},
      {"sqlite:///tmp/a=b.db", "sqlite:///tmp/a=b.db"},
      {"layerlab.db", "layerlab.db"},
      {"", ""},
      // unparseable: all of it after the scheme
      {"postgresql://bob:pa#ss", "postgresql://***"},
      {"postgresql://h#x/db", "postgresql://***"},
      {"postgresql:/bob:pw@h/db", "postgresql:***"},
      {"host=x password='unterminated", "***"},
      {"host=x password", "***"},
  };
  for (const Case& c : cases) EXPECT_EQ(mask_secrets(c.given), c.shown) << c.given;
}

TEST(MaskSecrets, SecretKeysAreDecodedBeforeTheyAreCompared) {
  EXPECT_TRUE(is_secret_key("password"));
  EXPECT_TRUE(is_secret_key("%70assword"));
  EXPECT_TRUE(is_secret_key("SslPassword"));
  EXPECT_TRUE(is_secret_key("%"));  // malformed: unknown, so secret
  EXPECT_FALSE(is_secret_key("service"));
  EXPECT_FALSE(is_secret_key("user"));
}

}  // namespace
}  // namespace layerlab
