"""The formats of PIX and of the Brazilian documents it carries: BR Codes (`brcode`), PIX keys
(`keys`) and CPF/CNPJ (`documents`). Pure: no I/O."""
