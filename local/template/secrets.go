package template

import "fmt"

// Secret is an AWS::SecretsManager::Secret whose value CloudFormation
// generates (GenerateSecretString): SecretStringTemplate, a JSON object,
// with GenerateStringKey set to a random string of PasswordLength.
type Secret struct {
	LogicalID string
	Template  string `cfn:"GenerateSecretString.SecretStringTemplate,required"`
	Key       string `cfn:"GenerateSecretString.GenerateStringKey,required"`
	Length    int    `cfn:"GenerateSecretString.PasswordLength" range:"1,4096"`
}

// Secrets returns every generated secret CloudFormation creates with refs
// (its Condition holds), in template order; a secret with a SecretString
// of its own is refused, not guessed.
func (t *Template) Secrets(refs map[string]string) ([]Secret, error) {
	r := resolver{t: t, refs: refs}
	return each(r, TypeSecret, "secret", func(res *resource) (Secret, error) {
		s := Secret{LogicalID: res.id, Length: 32}
		if lookup(res.props, "SecretString") != nil {
			return s, fmt.Errorf("SecretString: only generated secrets (GenerateSecretString) are created locally")
		}
		return s, r.decode(res.props, "", &s)
	})
}
